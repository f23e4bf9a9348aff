/*
 * statefiles: files of the state directory (lock, server.url, kubeconfig)
 * shared by server_main.c and its tests. Internal to the server module,
 * except srv_default_state_dir, which the CLI may use to find a server.
 */
#ifndef CUEUE_SERVER_STATEFILES_H
#define CUEUE_SERVER_STATEFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The default state directory: $CUEUE_STATE_DIR, else
 * $XDG_STATE_HOME/cueue, else ~/.local/state/cueue. Caller frees. */
char *srv_default_state_dir(void);

/* mkdir -p with mode 0700. Returns 0 or CU_EIO with a message. */
int srv__mkdirs(const char *path, char *err, size_t errlen);
/* Make the state directory private, whatever mode it had: the directory
 * 0700, the database files (cueue.db and its -wal and -shm) 0600, and
 * cueue.db created 0600 when absent so that SQLite gives its -wal and -shm
 * files the same mode. Returns 0, or CU_EIO with a message when dir is not
 * a directory or a mode cannot be set (the server then refuses to start
 * rather than keep readable state). */
int srv__secure_state(const char *dir, char *err, size_t errlen);
/* Take <dir>/server.lock (flock, non-blocking) and write our pid in it.
 * Returns 0 with the held fd, or CU_EEXIST naming the other server's pid,
 * or CU_EIO. The lock lasts until the fd is closed or the process ends. */
int srv__lock_state(const char *dir, int *fd_out, char *err, size_t errlen);
/* Write text to path atomically (temp file + fsync + rename). */
int srv__write_file(const char *path, const char *text, int mode, char *err, size_t errlen);
/* "http://127.0.0.1:6443" (https:// with tls) for the listen address: the
 * URL a client on this machine uses (0.0.0.0 -> 127.0.0.1, :: -> ::1,
 * IPv6 bracketed). Caller frees. */
char *srv__base_url(const char *listen_addr, uint16_t port, bool tls);
/* A kubeconfig with cluster, user and context `cueue` pointing at url,
 * current-context set; the user's bearer token when token is not NULL,
 * the cluster's certificate-authority-data (base64 of ca_pem) when ca_pem
 * is not NULL. Caller frees. */
char *srv__kubeconfig_text(const char *url, const char *token, const char *ca_pem);

#endif
