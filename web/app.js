/*
 * app.js: the router (#/queues, #/capacity, #/jobs[/KIND/NS/NAME],
 * #/timeline[?queue=Q]) and the render loop: a page is drawn again after
 * every batch of changes from the event stream, never on a timer.
 */
"use strict";

(function () {
  const main = document.getElementById("page");
  let shown = "";

  function route() {
    const hash = location.hash.replace(/^#\/?/, "") || "queues";
    const [path, query] = hash.split("?");
    return {parts: path.split("/").map(decodeURIComponent), params: new URLSearchParams(query || "")};
  }

  function render() {
    const {parts, params} = route();
    const name = D.pages[parts[0]] ? parts[0] : "queues";
    if (shown && shown !== name && D.pages[shown].leave) D.pages[shown].leave();
    shown = name;
    for (const a of document.querySelectorAll("nav a"))
      a.classList.toggle("active", a.dataset.page === name);
    const y = window.scrollY;
    main.textContent = "";
    main.dataset.page = name;
    if (!D.synced) {
      main.append(D.h("p", {class: "muted"}, "Loading…"));
      return;
    }
    try {
      D.pages[name].render(main, parts, render, params);
    } catch (e) {
      window.cueueDash.errors.push(String(e && e.stack || e));
      main.append(D.h("pre", {class: "error"}, "The page failed to draw: " + e));
    }
    window.scrollTo(0, y);
    D.renders++;
  }

  D.listeners.push(render);
  window.addEventListener("hashchange", render);
  render();
  D.connect();
})();
