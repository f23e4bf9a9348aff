/*
 * local-int: internals shared by the local executor's files (local.c: the
 * reaper thread and pod state machine; local_cmd.c: turning a Pod's
 * containers into argv/envp/cwd and finding programs). Not a public API.
 */
#ifndef CUEUE_EXEC_LOCAL_INT_H
#define CUEUE_EXEC_LOCAL_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "exec/exec.h"

/* What one container runs. All strings owned. */
struct lx_cmd {
    char *name;
    bool init;     /* an initContainer */
    char **argv;   /* NULL-terminated; NULL when error is set */
    char **envp;   /* NULL-terminated */
    char *cwd;
    char *error;   /* set when the container cannot start (StartError message) */
};

/* Build the commands of every container of pod (initContainers first, then
 * containers), applying the kubelet's $(VAR) expansion and the mountPath
 * rewrites. base_env is the server's environment (NULL-terminated,
 * borrowed). Returns the array (caller frees with lx_cmds_free) and its
 * length in *n. */
struct lx_cmd *lx_cmds_build(const struct exec_pod *pod, char *const *base_env,
                             const char *sandbox, size_t *n);
void lx_cmds_free(struct lx_cmd *cmds, size_t n);

/* Kubernetes' $(VAR) expansion of s against names/values[0..n) (later
 * entries win): "$$" -> "$", unknown references stay as written. Caller
 * frees. */
char *lx_expand(const char *s, char *const *envp);

/* Rewrite every occurrence of a mount path that stands as a path token
 * (at the start, or after a space, '=', ':' or quote; followed by the end,
 * '/', a space, ':', ';' or a quote) to its host directory, longest mount
 * path first. Caller frees. */
char *lx_rewrite_mounts(const char *s, const struct exec_env *mounts, size_t n_mounts);

/* Find the program argv0 the way execvp would, with PATH taken from envp
 * (default "/usr/local/bin:/usr/bin:/bin"), relative names with a '/' taken
 * from cwd. Returns the path (caller frees), or NULL with the runtime's
 * message in *err (caller frees): `exec: "ray": executable file not found
 * in $PATH`. */
char *lx_find_program(const char *argv0, char *const *envp, const char *cwd, char **err);

#endif
