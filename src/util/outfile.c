/* outfile.c - safe output files (rules in include/gpuxray/outfile.h).
 *
 * Notes:
 * - The FILE handed to writers is a fopencookie stream over the file
 *   descriptor, so the errno of the first failed write (ENOSPC, EPIPE, EIO)
 *   is kept and reported at commit; a stdio stream would only say "error".
 * - Temporary names: ".NAME.tmp-" + 6 characters drawn from the pid, a
 *   counter and the clock, created with O_EXCL (retried on a clash) so an
 *   existing file is never opened by mistake. A new file is created 0666
 *   (the umask applies, as for the shell); an existing file's mode, owner
 *   and group are copied onto the temporary file before any byte is written.
 * - Registry: a fixed table of temporary paths, each slot marked used only
 *   after its path is complete, so the signal handler (unlink + raise, both
 *   async-signal-safe) never reads a half-written path.
 * - Symbolic links are resolved with realpath(3) before the temporary file
 *   is made, so the rename replaces the link's target, in its directory. */
#include "gpuxray/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_ATTEMPTS 64 /* O_EXCL clashes tolerated before giving up */

struct gx_out_state {
    const char *path; /* as given */
    char *dest;       /* resolved destination */
    char *tmp;        /* temporary file; NULL when written straight */
    int fd, err, is_stdout, slot;
};

static char reg_path[GX_OUT_MAX_OPEN][PATH_MAX];
static volatile sig_atomic_t reg_used[GX_OUT_MAX_OPEN];

/* ------------------------------------------------------------ registry */

static int reg_add(const char *p)
{
    if (strlen(p) >= PATH_MAX)
        return -1;
    for (int i = 0; i < GX_OUT_MAX_OPEN; i++)
        if (!reg_used[i]) {
            memcpy(reg_path[i], p, strlen(p) + 1);
            reg_used[i] = 1;
            return i;
        }
    return -1;
}

static void reg_drop(int slot)
{
    if (slot >= 0)
        reg_used[slot] = 0;
}

static void on_signal(int sig)
{
    for (int i = 0; i < GX_OUT_MAX_OPEN; i++)
        if (reg_used[i])
            (void)unlink(reg_path[i]);
    raise(sig); /* SA_RESETHAND: delivered with the default action on return */
}

void gx_out_install_signal_cleanup(void)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = (int)SA_RESETHAND;
        (void)sigaction(sigs[i], &sa, NULL);
    }
}

/* ------------------------------------------------------------- helpers */

static int fail_errno(gx_msg *msg, const char *path, int e)
{
    return gx_fail(msg, GX_EIO, "%s: cannot write: %s", path, strerror(e));
}

/* Directory part of p (malloc'd): "." when p has no slash. */
static char *dir_of(const char *p)
{
    const char *slash = strrchr(p, '/');
    if (!slash)
        return strdup(".");
    size_t n = slash == p ? 1 : (size_t)(slash - p);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

/* The directory a new file or a temporary file goes into must be a
 * writable, searchable directory. 0 or an errno. */
static int dir_writable(const char *file)
{
    char *d = dir_of(file);
    if (!d)
        return ENOMEM;
    struct stat st;
    int e = 0;
    if (stat(d, &st) != 0)
        e = errno;
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if (access(d, W_OK | X_OK) != 0)
        e = errno;
    free(d);
    return e;
}

/* What path names: *exists, its stat (links followed) and the resolved
 * destination (malloc'd). 0 or an errno (ELOOP for a dangling link). */
static int resolve(const char *path, int *exists, struct stat *st, char **dest)
{
    struct stat lst;
    *exists = 0;
    *dest = NULL;
    if (lstat(path, &lst) != 0) {
        if (errno != ENOENT)
            return errno;
        *dest = strdup(path);
        return *dest ? 0 : ENOMEM;
    }
    *exists = 1;
    if (!S_ISLNK(lst.st_mode)) {
        *st = lst;
        *dest = strdup(path);
        return *dest ? 0 : ENOMEM;
    }
    if (stat(path, st) != 0)
        return errno == ENOENT ? -1 : errno; /* -1: dangling link */
    if (!S_ISREG(st->st_mode)) {
        *dest = strdup(path); /* written straight: open through the link */
        return *dest ? 0 : ENOMEM;
    }
    *dest = realpath(path, NULL);
    return *dest ? 0 : errno;
}

static int resolve_fail(gx_msg *msg, const char *path, int e)
{
    if (e == -1)
        return gx_fail(msg, GX_EIO,
                       "%s: cannot write: a symbolic link to a file that does not exist "
                       "(not writing through a dangling link)",
                       path);
    if (e == ENOMEM)
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    return fail_errno(msg, path, e);
}

/* ---------------------------------------------------------------- check */

int gx_out_check(const char *path, gx_msg *msg)
{
    if (!path || !*path)
        return gx_fail(msg, GX_EINVAL, "an output path is required ('-' for standard output)");
    if (!strcmp(path, "-"))
        return GX_OK;
    int exists, e;
    struct stat st;
    char *dest;
    e = resolve(path, &exists, &st, &dest);
    if (e)
        return resolve_fail(msg, path, e);
    if (!exists)
        e = dir_writable(dest);
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (access(dest, W_OK) != 0)
        e = errno;
    else if (S_ISREG(st.st_mode))
        e = dir_writable(dest);
    free(dest);
    return e ? fail_errno(msg, path, e) : GX_OK;
}

/* ----------------------------------------------------------------- open */

static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
    gx_out_state *s = cookie;
    size_t off = 0;
    while (off < n && !s->err) {
        ssize_t w = write(s->fd, buf + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            s->err = w < 0 ? errno : EIO;
        else
            off += (size_t)w;
    }
    return s->err ? 0 : (ssize_t)n;
}

static int cookie_seek(void *cookie, off64_t *off, int whence)
{
    gx_out_state *s = cookie;
    off64_t r = lseek64(s->fd, *off, whence);
    if (r < 0)
        return -1;
    *off = r;
    return 0;
}

int gx_out_failed(const gx_out *o)
{
    return o && o->st ? o->st->err : 0;
}

/* Create the temporary file next to dest with the given mode. */
static int make_tmp(gx_out_state *s, mode_t mode)
{
    char *d = dir_of(s->dest);
    const char *base = strrchr(s->dest, '/');
    base = base ? base + 1 : s->dest;
    size_t cap = (d ? strlen(d) : 0) + strlen(base) + 32;
    s->tmp = d ? malloc(cap) : NULL;
    if (!s->tmp) {
        free(d);
        return ENOMEM;
    }
    static unsigned counter;
    static const char al[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    int e = EEXIST;
    for (int attempt = 0; attempt < TMP_ATTEMPTS && e == EEXIST; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ (++counter * 0x9e3779b9u);
        char sfx[7];
        for (int i = 0; i < 6; i++, x /= 36)
            sfx[i] = al[x % 36];
        sfx[6] = '\0';
        snprintf(s->tmp, cap, "%s/.%s.tmp-%s", d, base, sfx);
        s->slot = reg_add(s->tmp);
        if (s->slot < 0) {
            e = EMFILE;
            break;
        }
        s->fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        e = s->fd < 0 ? errno : 0;
        if (e) {
            reg_drop(s->slot);
            s->slot = -1;
        }
    }
    free(d);
    if (e) {
        free(s->tmp);
        s->tmp = NULL;
    }
    return e;
}

/* Give the temporary file the existing destination's owner and mode. */
static int copy_attrs(int fd, const struct stat *st)
{
    if (fchown(fd, st->st_uid, st->st_gid) != 0)
        (void)fchown(fd, (uid_t)-1, st->st_gid); /* group only, when we may */
    return fchmod(fd, st->st_mode & 07777) != 0 ? errno : 0;
}

static int open_fd(gx_out_state *s, gx_msg *msg)
{
    int exists, e;
    struct stat st;
    e = resolve(s->path, &exists, &st, &s->dest);
    if (e)
        return resolve_fail(msg, s->path, e);
    if (exists && S_ISDIR(st.st_mode))
        return fail_errno(msg, s->path, EISDIR);
    if (exists && !S_ISREG(st.st_mode)) { /* device, FIFO, terminal: straight */
        s->fd = open(s->dest, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        return s->fd < 0 ? fail_errno(msg, s->path, errno) : GX_OK;
    }
    if (exists && access(s->dest, W_OK) != 0)
        return fail_errno(msg, s->path, errno);
    e = make_tmp(s, exists ? 0600 : 0666);
    if (e == EMFILE)
        return gx_fail(msg, GX_EIO, "%s: cannot write: more than %d outputs open at once",
                       s->path, GX_OUT_MAX_OPEN);
    if (e)
        return gx_fail(msg, GX_EIO, "%s: cannot create a temporary file in its directory: %s",
                       s->path, strerror(e));
    if (exists && (e = copy_attrs(s->fd, &st)) != 0)
        return gx_fail(msg, GX_EIO, "%s: cannot keep the file's permissions: %s", s->path,
                       strerror(e));
    return GX_OK;
}

static void state_free(gx_out_state *s)
{
    if (!s)
        return;
    if (s->fd >= 0 && !s->is_stdout)
        close(s->fd);
    if (s->tmp) {
        unlink(s->tmp);
        free(s->tmp);
    }
    reg_drop(s->slot);
    free(s->dest);
    free(s);
}

int gx_out_open(gx_out *o, const char *path, gx_msg *msg)
{
    o->f = NULL;
    o->st = NULL;
    if (!path || !*path)
        return gx_fail(msg, GX_EINVAL, "an output path is required ('-' for standard output)");
    gx_out_state *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    s->path = path;
    s->fd = -1;
    s->slot = -1;
    int rc = GX_OK;
    if (!strcmp(path, "-")) {
        s->is_stdout = 1;
        s->fd = STDOUT_FILENO;
        if (fflush(stdout) != 0)
            rc = gx_fail(msg, GX_EIO, "standard output: write error: %s", strerror(errno));
    } else {
        rc = open_fd(s, msg);
    }
    if (rc == GX_OK) {
        cookie_io_functions_t io = {NULL, cookie_write, cookie_seek, NULL};
        o->f = fopencookie(s, "w", io);
        if (!o->f)
            rc = gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    }
    if (rc != GX_OK) {
        state_free(s);
        return rc;
    }
    o->st = s;
    return GX_OK;
}

/* ---------------------------------------------------------- commit/abort */

int gx_out_commit(gx_out *o, gx_msg *msg)
{
    gx_out_state *s = o->st;
    if (!s || !o->f)
        return gx_fail(msg, GX_EINVAL, "gx_out_commit: not open");
    const char *name = s->is_stdout ? "standard output" : s->path;
    int fe = fflush(o->f) != 0 || ferror(o->f);
    fclose(o->f);
    o->f = NULL;
    int e = s->err ? s->err : fe ? EIO : 0;
    if (!e && s->tmp && fsync(s->fd) != 0)
        e = errno;
    if (!s->is_stdout && s->fd >= 0) {
        if (close(s->fd) != 0 && !e && errno != EINTR)
            e = errno;
        s->fd = -1;
    }
    if (!e && s->tmp && rename(s->tmp, s->dest) != 0)
        e = errno;
    if (!e && s->tmp) { /* renamed: nothing left to remove */
        free(s->tmp);
        s->tmp = NULL;
    }
    state_free(s);
    o->st = NULL;
    return e ? gx_fail(msg, GX_EIO, "%s: write error: %s", name, strerror(e)) : GX_OK;
}

void gx_out_abort(gx_out *o)
{
    if (o->f) {
        o->st->err = o->st->err ? o->st->err : ECANCELED; /* the buffer is dropped */
        fclose(o->f);
        o->f = NULL;
    }
    state_free(o->st);
    o->st = NULL;
}

int gx_out_write_file(const char *path, const void *data, size_t len, gx_msg *msg)
{
    gx_out o;
    int rc = gx_out_open(&o, path, msg);
    if (rc != GX_OK)
        return rc;
    if (len && fwrite(data, 1, len, o.f) != len && !o.st->err)
        o.st->err = EIO;
    return gx_out_commit(&o, msg);
}
