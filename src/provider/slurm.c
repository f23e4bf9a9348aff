/*
 * provider/slurm: a Slurm partition's nodes through libslurm (see slurm.h).
 * The conversion from a node record is separate from the RPCs so that it is
 * tested without a slurmctld.
 */
#include "provider/slurm.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/err.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define PROV_SLURM_DEFAULT_CONF "/etc/slurm/slurm.conf"

/* The count of one "NAME[:TYPE]:COUNT[(...)]" entry [s, end) when its name
 * is name, else -1. */
static int64_t entry_count(const char *s, const char *end, const char *name)
{
    size_t nl = strlen(name);
    if ((size_t)(end - s) < nl || strncmp(s, name, nl) || (s + nl < end && s[nl] != ':'))
        return -1;
    const char *paren = memchr(s, '(', (size_t)(end - s));
    if (paren)
        end = paren;
    const char *colon = NULL;
    for (const char *p = s; p < end; p++)
        if (*p == ':')
            colon = p;
    if (!colon)
        return 1;
    int64_t v = 0;
    for (const char *p = colon + 1; p < end; p++) {
        if (*p < '0' || *p > '9')
            return colon == s + nl ? 0 : 1; /* NAME:TYPE without count */
        v = v * 10 + (*p - '0');
        if (v > INT32_MAX)
            return INT32_MAX;
    }
    return v;
}

int64_t prov_slurm_gres_count(const char *gres, const char *name)
{
    int64_t total = 0;
    const char *s = gres;
    while (s && *s) {
        /* entries are separated by commas outside parentheses */
        const char *e = s;
        int depth = 0;
        while (*e && (*e != ',' || depth)) {
            depth += (*e == '(') - (*e == ')');
            e++;
        }
        int64_t c = entry_count(s, e, name);
        if (c > 0)
            total += c;
        s = *e ? e + 1 : e;
    }
    return total;
}

static bool is_ready(uint32_t st)
{
    uint32_t base = st & NODE_STATE_BASE;
    if (base == NODE_STATE_DOWN || base == NODE_STATE_UNKNOWN || base == NODE_STATE_FUTURE)
        return false;
    return !(st & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND |
                   NODE_STATE_POWERED_DOWN | NODE_STATE_POWERING_DOWN | NODE_STATE_POWER_DOWN |
                   NODE_STATE_POWERING_UP | NODE_STATE_INVALID_REG));
}

static const char *state_word(uint32_t st)
{
    if (st & NODE_STATE_POWERED_DOWN)
        return "powered down";
    if (st & NODE_STATE_POWERING_UP)
        return "powering up";
    if (st & (NODE_STATE_POWERING_DOWN | NODE_STATE_POWER_DOWN))
        return "powering down";
    if (st & NODE_STATE_NO_RESPOND)
        return "not responding";
    if (st & NODE_STATE_FAIL)
        return "failing";
    uint32_t base = st & NODE_STATE_BASE;
    if (st & NODE_STATE_DRAIN)
        return base == NODE_STATE_IDLE || base == NODE_STATE_DOWN ? "drained" : "draining";
    switch (base) {
    case NODE_STATE_IDLE: return "idle";
    case NODE_STATE_ALLOCATED: return "allocated";
    case NODE_STATE_MIXED: return "mixed";
    case NODE_STATE_DOWN: return "down";
    case NODE_STATE_FUTURE: return "future";
    default: return "unknown";
    }
}

void prov_slurm_node_from_info(const struct node_info *n, struct prov_slurm_node *out)
{
    memset(out, 0, sizeof(*out));
    out->name = xstrdup(n->name ? n->name : "");
    out->addr = xstrdup(n->node_addr && *n->node_addr ? n->node_addr : out->name);
    out->cpu_milli = (int64_t)n->cpus * 1000;
    out->memory_bytes = (int64_t)n->real_memory * 1024 * 1024;
    out->tpu = prov_slurm_gres_count(n->gres, "tpu");
    out->gpu = prov_slurm_gres_count(n->gres, "gpu");
    char *f = xstrdup(n->features ? n->features : "");
    for (char *save = NULL, *t = strtok_r(f, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        out->features = xreallocarray(out->features, out->n_features + 1, sizeof(char *));
        out->features[out->n_features++] = xstrdup(t);
    }
    xfree(f);
    out->ready = is_ready(n->node_state);
    out->state = state_word(n->node_state);
    out->cloud = (n->node_state & NODE_STATE_CLOUD) != 0;
    out->powered_down = (n->node_state & NODE_STATE_POWERED_DOWN) != 0;
    out->reason = n->reason && *n->reason ? xstrdup(n->reason) : NULL;
}

void prov_slurm_node_release(struct prov_slurm_node *n)
{
    xfree(n->name);
    xfree(n->addr);
    for (size_t i = 0; i < n->n_features; i++)
        xfree(n->features[i]);
    xfree(n->features);
    xfree(n->reason);
    memset(n, 0, sizeof(*n));
}

/* The partition's record in parts, or NULL (err names the partitions). */
static const partition_info_t *find_partition(const partition_info_msg_t *parts,
                                              const char *name, char *err, size_t errlen)
{
    struct sbuf sb;
    sbuf_init(&sb, 4096);
    for (uint32_t i = 0; i < parts->record_count; i++) {
        const partition_info_t *p = &parts->partition_array[i];
        if (p->name && !strcmp(p->name, name)) {
            sbuf_release(&sb);
            return p;
        }
        sbuf_addf(&sb, "%s%s", i ? ", " : "", p->name ? p->name : "");
    }
    snprintf(err, errlen, "Slurm partition \"%s\" not found (partitions: %s)", name,
             sb.len ? sb.buf : "none");
    sbuf_release(&sb);
    return NULL;
}

int prov_slurm_partition_nodes(const char *partition, struct prov_slurm_node **out, size_t *n,
                               char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    /* libslurm ends the process (fatal) when it finds no configuration */
    const char *conf = getenv("SLURM_CONF");
    if (!conf || !*conf)
        conf = PROV_SLURM_DEFAULT_CONF;
    if (access(conf, R_OK) != 0) {
        snprintf(err, errlen, "cannot read the Slurm configuration %s (set SLURM_CONF): %s",
                 conf, strerror(errno));
        return CU_EIO;
    }
    slurm_init(conf);
    partition_info_msg_t *parts = NULL;
    node_info_msg_t *nodes = NULL;
    if (slurm_load_partitions(0, &parts, SHOW_ALL) != 0 ||
        slurm_load_node(0, &nodes, SHOW_ALL) != 0) {
        snprintf(err, errlen, "cannot reach slurmctld: %s", slurm_strerror(slurm_get_errno()));
        slurm_free_partition_info_msg(parts);
        return CU_EIO;
    }
    const partition_info_t *p = find_partition(parts, partition, err, errlen);
    int rc = p ? 0 : CU_ENOTFOUND;
    /* the partition's node list ("od[1-4]"), expanded once */
    hostlist_t hl = p && p->nodes ? slurm_hostlist_create(p->nodes) : NULL;
    for (uint32_t i = 0; hl && i < nodes->record_count; i++) {
        const node_info_t *ni = &nodes->node_array[i];
        if (!ni->name || slurm_hostlist_find(hl, ni->name) < 0)
            continue;
        *out = xreallocarray(*out, *n + 1, sizeof(**out));
        prov_slurm_node_from_info(ni, &(*out)[(*n)++]);
    }
    if (hl)
        slurm_hostlist_destroy(hl);
    slurm_free_node_info_msg(nodes);
    slurm_free_partition_info_msg(parts);
    return rc;
}

/* ---- the reader ---- */

struct reader_part {
    char *name;
    double asked_s;              /* clk_mono_s of the last get */
    int rc;                      /* 1 = never read */
    char err[512];
    struct prov_slurm_node *nodes;
    size_t n;
};

struct prov_slurm_reader {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool started, quit;
    struct reader_part *parts;
    size_t n_parts;
};

static void nodes_free(struct prov_slurm_node *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        prov_slurm_node_release(&nodes[i]);
    xfree(nodes);
}

static void node_copy(const struct prov_slurm_node *src, struct prov_slurm_node *dst)
{
    *dst = *src;
    dst->name = xstrdup(src->name);
    dst->addr = xstrdup(src->addr);
    dst->reason = src->reason ? xstrdup(src->reason) : NULL;
    dst->features = src->n_features ? xcalloc(src->n_features, sizeof(char *)) : NULL;
    for (size_t i = 0; i < src->n_features; i++)
        dst->features[i] = xstrdup(src->features[i]);
}

static void *reader_main(void *arg)
{
    struct prov_slurm_reader *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->quit) {
        /* one pass: every partition asked for lately, one at a time */
        for (size_t i = 0; i < r->n_parts && !r->quit; i++) {
            if (clk_mono_s() - r->parts[i].asked_s > PROV_SLURM_READER_KEEP_S)
                continue;
            char *name = xstrdup(r->parts[i].name);
            pthread_mutex_unlock(&r->mu);
            struct prov_slurm_node *nodes = NULL;
            size_t n = 0;
            char err[512] = "";
            int rc = prov_slurm_partition_nodes(name, &nodes, &n, err, sizeof(err));
            pthread_mutex_lock(&r->mu);
            struct reader_part *p = &r->parts[i]; /* parts only grow, under mu */
            nodes_free(p->nodes, p->n);
            p->nodes = nodes;
            p->n = n;
            p->rc = rc;
            snprintf(p->err, sizeof(p->err), "%s", err);
            xfree(name);
        }
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += PROV_SLURM_READ_PERIOD_MS % 1000 * 1000000L;
        t.tv_sec += PROV_SLURM_READ_PERIOD_MS / 1000 + t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        if (!r->quit)
            pthread_cond_timedwait(&r->cv, &r->mu, &t);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

struct prov_slurm_reader *prov_slurm_reader_new(void)
{
    struct prov_slurm_reader *r = xcalloc(1, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    return r;
}

int prov_slurm_reader_get(struct prov_slurm_reader *r, const char *partition,
                          struct prov_slurm_node **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&r->mu);
    struct reader_part *p = NULL;
    for (size_t i = 0; i < r->n_parts && !p; i++)
        if (!strcmp(r->parts[i].name, partition))
            p = &r->parts[i];
    if (!p) {
        r->parts = xreallocarray(r->parts, r->n_parts + 1, sizeof(*r->parts));
        p = &r->parts[r->n_parts++];
        memset(p, 0, sizeof(*p));
        p->name = xstrdup(partition);
        p->rc = 1;
        pthread_cond_signal(&r->cv); /* read it now */
    }
    p->asked_s = clk_mono_s();
    if (!r->started && pthread_create(&r->thread, NULL, reader_main, r) == 0)
        r->started = true;
    int rc = p->rc;
    if (rc == 0) {
        *out = p->n ? xcalloc(p->n, sizeof(**out)) : NULL;
        for (size_t i = 0; i < p->n; i++)
            node_copy(&p->nodes[i], &(*out)[i]);
        *n = p->n;
    } else if (rc < 0) {
        snprintf(err, errlen, "%s", p->err);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

void prov_slurm_reader_free(struct prov_slurm_reader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->quit = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (r->started)
        pthread_join(r->thread, NULL);
    for (size_t i = 0; i < r->n_parts; i++) {
        xfree(r->parts[i].name);
        nodes_free(r->parts[i].nodes, r->parts[i].n);
    }
    xfree(r->parts);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    xfree(r);
}
