/*
 * test_fullvfs: a SQLite VFS for unit tests that behaves like a full disk
 * on demand. fullvfs_install() registers it as the default VFS (it wraps
 * the one that was the default: every call goes through to it); while
 * fullvfs_full is true, every write or growth of any file (database,
 * WAL, shared memory) fails with SQLITE_FULL ("database or disk is full"),
 * as they do on a file system without free space. Header-only: include it
 * in one test file.
 */
#ifndef CUEUE_TEST_FULLVFS_H
#define CUEUE_TEST_FULLVFS_H

#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>

static bool fullvfs_full;
static sqlite3_vfs *fullvfs_real;

/* Our file: the real VFS's file follows it in the same allocation. */
struct fullvfs_file {
    sqlite3_file base;
    sqlite3_file *real;
};

#define FV_REAL(f) (((struct fullvfs_file *)(f))->real)

static int fv_close(sqlite3_file *f)
{
    int rc = FV_REAL(f)->pMethods ? FV_REAL(f)->pMethods->xClose(FV_REAL(f)) : SQLITE_OK;
    return rc;
}
static int fv_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    return FV_REAL(f)->pMethods->xRead(FV_REAL(f), buf, n, off);
}
static int fv_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    if (fullvfs_full)
        return SQLITE_FULL;
    return FV_REAL(f)->pMethods->xWrite(FV_REAL(f), buf, n, off);
}
static int fv_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return FV_REAL(f)->pMethods->xTruncate(FV_REAL(f), size);
}
static int fv_sync(sqlite3_file *f, int flags)
{
    return FV_REAL(f)->pMethods->xSync(FV_REAL(f), flags);
}
static int fv_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return FV_REAL(f)->pMethods->xFileSize(FV_REAL(f), size);
}
static int fv_lock(sqlite3_file *f, int l) { return FV_REAL(f)->pMethods->xLock(FV_REAL(f), l); }
static int fv_unlock(sqlite3_file *f, int l)
{
    return FV_REAL(f)->pMethods->xUnlock(FV_REAL(f), l);
}
static int fv_check(sqlite3_file *f, int *out)
{
    return FV_REAL(f)->pMethods->xCheckReservedLock(FV_REAL(f), out);
}
static int fv_fcntl(sqlite3_file *f, int op, void *arg)
{
    if (fullvfs_full && op == SQLITE_FCNTL_SIZE_HINT)
        return SQLITE_FULL;
    return FV_REAL(f)->pMethods->xFileControl(FV_REAL(f), op, arg);
}
static int fv_sector(sqlite3_file *f) { return FV_REAL(f)->pMethods->xSectorSize(FV_REAL(f)); }
static int fv_chars(sqlite3_file *f)
{
    return FV_REAL(f)->pMethods->xDeviceCharacteristics(FV_REAL(f));
}
static int fv_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp)
{
    return FV_REAL(f)->pMethods->xShmMap(FV_REAL(f), pg, sz, extend, pp);
}
static int fv_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return FV_REAL(f)->pMethods->xShmLock(FV_REAL(f), off, n, flags);
}
static void fv_shm_barrier(sqlite3_file *f) { FV_REAL(f)->pMethods->xShmBarrier(FV_REAL(f)); }
static int fv_shm_unmap(sqlite3_file *f, int del)
{
    return FV_REAL(f)->pMethods->xShmUnmap(FV_REAL(f), del);
}
static int fv_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
    *pp = NULL; /* no memory-mapped reads: every page goes through xRead */
    (void)f;
    (void)off;
    (void)n;
    return SQLITE_OK;
}
static int fv_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    (void)f;
    (void)off;
    (void)p;
    return SQLITE_OK;
}

static const sqlite3_io_methods fullvfs_io = {
    3,           fv_close,      fv_read,      fv_write,       fv_truncate,  fv_sync,
    fv_size,     fv_lock,       fv_unlock,    fv_check,       fv_fcntl,     fv_sector,
    fv_chars,    fv_shm_map,    fv_shm_lock,  fv_shm_barrier, fv_shm_unmap, fv_fetch,
    fv_unfetch,
};

static int fv_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    struct fullvfs_file *ff = (struct fullvfs_file *)f;
    ff->real = (sqlite3_file *)(ff + 1);
    memset(ff->real, 0, (size_t)fullvfs_real->szOsFile);
    int rc = fullvfs_real->xOpen(fullvfs_real, name, ff->real, flags, out);
    ff->base.pMethods = ff->real->pMethods ? &fullvfs_io : NULL;
    return rc;
}
static int fv_delete(sqlite3_vfs *v, const char *n, int sync)
{
    (void)v;
    return fullvfs_real->xDelete(fullvfs_real, n, sync);
}
static int fv_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
    (void)v;
    return fullvfs_real->xAccess(fullvfs_real, n, flags, out);
}
static int fv_fullname(sqlite3_vfs *v, const char *n, int len, char *out)
{
    (void)v;
    return fullvfs_real->xFullPathname(fullvfs_real, n, len, out);
}
static int fv_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return fullvfs_real->xRandomness(fullvfs_real, n, out);
}
static int fv_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return fullvfs_real->xSleep(fullvfs_real, us);
}
static int fv_time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return fullvfs_real->xCurrentTime(fullvfs_real, out);
}
static int fv_lasterr(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return fullvfs_real->xGetLastError ? fullvfs_real->xGetLastError(fullvfs_real, n, out) : 0;
}

static sqlite3_vfs fullvfs = {
    .iVersion = 1,
    .mxPathname = 512,
    .zName = "cueue-test-full",
    .xOpen = fv_open,
    .xDelete = fv_delete,
    .xAccess = fv_access,
    .xFullPathname = fv_fullname,
    .xRandomness = fv_random,
    .xSleep = fv_sleep,
    .xCurrentTime = fv_time,
    .xGetLastError = fv_lasterr,
};

/* Make the full-disk VFS SQLite's default (idempotent). */
static inline void fullvfs_install(void)
{
    if (fullvfs_real)
        return;
    fullvfs_real = sqlite3_vfs_find(NULL);
    fullvfs.szOsFile = (int)sizeof(struct fullvfs_file) + fullvfs_real->szOsFile;
    fullvfs.mxPathname = fullvfs_real->mxPathname;
    sqlite3_vfs_register(&fullvfs, 1);
}

#endif
