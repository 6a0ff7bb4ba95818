/* The path layer's read cost: a counting copy of a path counts the files it
 * reads whole and their bytes, nothing else, and reads what its original
 * reads (same root, same refused paths). Under a root, nothing in the tree
 * leads outside it: links absolute or relative, ".." past the root, a
 * directory that is a link; writes never follow a link; a FIFO is refused
 * without blocking and named. */

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ng-test.h"
#include "path-internal.h"
#include "util.h"

static char tree[64];

static void put(const char *rel, const char *text)
{
        char path[256];
        snprintf(path, sizeof(path), "%s%s", tree, rel);
        FILE *f = fopen(path, "we");
        ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
        const char *tmp = getenv("TMPDIR");
        snprintf(tree, sizeof(tree), "%s/ng-path-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        ck_assert_ptr_nonnull(mkdtemp(tree));
        char dir[128];
        snprintf(dir, sizeof(dir), "%s/numaguard", tree);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        snprintf(dir, sizeof(dir), "%s/d", tree);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        put("/five", "hello");
        put("/n", "42\n");
        put("/bad", "4x2\n");
        put("/secret", "7\n");
        put(NG_PATH_DENIED_FILE, "/secret\n");
}

static void teardown(void)
{
        const char *files[] = { "/five", "/n", "/bad", "/secret", NG_PATH_DENIED_FILE, "/numaguard", "/d", "" };
        char path[256];
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                snprintf(path, sizeof(path), "%s%s", tree, files[i]);
                (void) remove(path);
        }
}

START_TEST(counts_whole_file_reads)
{
        struct ng_path *p, *cp;
        struct ng_path_cost cost = { 0, 0 };
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        ck_assert_int_eq(ng_path_new_counting(p, &cost, &cp), 0);
        ck_assert_str_eq(ng_path_root(cp), ng_path_root(p));

        char *buf;
        size_t len;
        ck_assert_int_eq(ng_path_read(cp, &buf, &len, "/%s", "five"), 0);
        ck_assert_str_eq(buf, "hello");
        free(buf);
        ck_assert_uint_eq(cost.files_read, 1);
        ck_assert_uint_eq(cost.bytes_read, 5);

        uint64_t v = 0;
        ck_assert_int_eq(ng_path_read_u64(cp, &v, "/n"), 0);
        ck_assert_uint_eq(v, 42);
        ck_assert_uint_eq(cost.files_read, 2);
        ck_assert_uint_eq(cost.bytes_read, 8);

        /* A file that was read but does not parse still cost its read. */
        ck_assert_int_eq(ng_path_read_u64(cp, &v, "/bad"), -EINVAL);
        ck_assert_uint_eq(v, 42);
        ck_assert_uint_eq(cost.files_read, 3);
        ck_assert_uint_eq(cost.bytes_read, 12);

        /* Not read: absent, refused by the tree, a directory, a stat. */
        ck_assert_int_eq(ng_path_read(cp, &buf, &len, "/absent"), -ENOENT);
        ck_assert_int_eq(ng_path_read_u64(cp, &v, "/secret"), -EACCES);
        ck_assert_int_eq(ng_path_read(cp, &buf, &len, "/d"), -EINVAL);
        uint64_t size;
        ck_assert_int_eq(ng_path_file_size(cp, &size, "/five"), 0);
        ck_assert_uint_eq(size, 5);
        ck_assert_uint_eq(cost.files_read, 3);
        ck_assert_uint_eq(cost.bytes_read, 12);

        /* The original counts nothing. */
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/five"), 0);
        free(buf);
        ck_assert_uint_eq(cost.files_read, 3);

        /* The copy stands alone: freeing the original leaves it whole. */
        ng_path_free(p);
        ck_assert_int_eq(ng_path_read_u64(cp, &v, "/secret"), -EACCES);
        ck_assert_int_eq(ng_path_read_u64(cp, &v, "/n"), 0);
        ck_assert_uint_eq(cost.files_read, 4);
        ng_path_free(cp);
}
END_TEST

/* ---- links out of the tree ---- */

static char outside[64], secret[128];

static void link_setup(void)
{
        setup();
        const char *tmp = getenv("TMPDIR");
        snprintf(outside, sizeof(outside), "%s/ng-outside-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        ck_assert_ptr_nonnull(mkdtemp(outside));
        snprintf(secret, sizeof(secret), "%s/secret", outside);
        FILE *f = fopen(secret, "we");
        ck_assert_ptr_nonnull(f);
        fputs("SECRET\n", f);
        ck_assert_int_eq(fclose(f), 0);
        char path[256], up[256] = "";
        for (int i = 0; i < 16; i++)
                strcat(up, "../");
        const struct { const char *name, *to; } links[] = {
                { "/abs", secret }, { "/rel", NULL }, { "/dir", outside }, { "/inside", "/five" },
                { "/loop", "loop" },
        };
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                char to[256];
                snprintf(to, sizeof(to), "%s", links[i].to ? links[i].to : "");
                if (!links[i].to)
                        snprintf(to, sizeof(to), "%s%s", up, secret + 1);
                snprintf(path, sizeof(path), "%s%s", tree, links[i].name);
                ck_assert_int_eq(symlink(to, path), 0);
        }
        snprintf(path, sizeof(path), "%s/fifo", tree);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
}

static void link_teardown(void)
{
        const char *names[] = { "/abs", "/rel", "/dir", "/inside", "/loop", "/fifo" };
        char path[256];
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                snprintf(path, sizeof(path), "%s%s", tree, names[i]);
                (void) unlink(path);
        }
        (void) unlink(secret);
        (void) rmdir(outside);
        teardown();
}

static void assert_secret_intact(void)
{
        char buf[32] = "";
        FILE *f = fopen(secret, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
        fclose(f);
        ck_assert_str_eq(buf, "SECRET\n");
}

START_TEST(reads_stay_in_the_tree)
{
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        char *buf = NULL, dir_file[160];
        size_t len;
        /* absolute and relative links, and ".." past the root, land inside */
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/abs"), -ENOENT);
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/rel"), -ENOENT);
        snprintf(dir_file, sizeof(dir_file), "/../../../../../../../..%s", secret);
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "%s", dir_file), -ENOENT);
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/dir/secret"), -ENOENT);
        char **names;
        ck_assert_int_eq(ng_path_list(p, &names, NULL, "/dir"), -ENOENT);
        uint64_t size;
        ck_assert_int_eq(ng_path_file_size(p, &size, "/abs"), -ENOENT);
        ck_assert_int_eq(ng_path_file_size(p, &size, "/dir/secret"), -ENOENT);
        ck_assert_ptr_null(buf);
        /* a tree's own absolute link means the tree's file */
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/inside"), 0);
        ck_assert_str_eq(buf, "hello");
        free(buf);
        ng_path_free(p);
}
END_TEST

START_TEST(writes_stay_in_the_tree)
{
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        ck_assert_int_lt(ng_path_write(p, "0\n", "/abs"), 0);
        ck_assert_int_lt(ng_path_write(p, "0\n", "/rel"), 0);
        ck_assert_int_lt(ng_path_write(p, "0\n", "/dir/secret"), 0);
        ck_assert_int_lt(ng_path_write(p, "0\n", "/inside"), 0);       /* never through a link */
        assert_secret_intact();
        /* directories of a new file are never made through a link out */
        char name[64];
        ck_assert_int_eq(ng_path_open_parent(p, true, name, sizeof(name), "/dir/made/file"), -ENOENT);
        char path[256];
        snprintf(path, sizeof(path), "%s/made", outside);
        ck_assert_int_ne(access(path, F_OK), 0);
        ng_path_free(p);
}
END_TEST

START_TEST(fifo_and_loop_named)
{
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        char *buf = NULL, at[256], why[160];
        size_t len;
        /* returns at once: opened O_NONBLOCK, refused by fstat */
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/fifo"), -EINVAL);
        ck_assert_int_eq(ng_path_why(p, -EINVAL, "/fifo", at, sizeof(at), why, sizeof(why)), 0);
        ck_assert_str_eq(at, "/fifo");
        ck_assert_str_eq(why, "is a FIFO, not a regular file");
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/loop"), -ELOOP);
        ck_assert_int_eq(ng_path_why(p, -ELOOP, "/loop", at, sizeof(at), why, sizeof(why)), 0);
        ck_assert_str_eq(why, "too many levels of symbolic links");
        /* a FIFO where a directory must be: the component is named */
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/fifo/status"), -ENOTDIR);
        ck_assert_int_eq(ng_path_why(p, -ENOTDIR, "/fifo/status", at, sizeof(at), why, sizeof(why)), 0);
        ck_assert_str_eq(at, "/fifo");
        ck_assert_str_eq(why, "is a FIFO, not a directory");
        ng_path_free(p);
}
END_TEST

/* A link that leads nowhere in the tree (#36: numa_maps -> /dev/zero, which
 * the tree does not hold) reads as missing; why names the link and where
 * it points, where a file simply missing has nothing to say. */
START_TEST(dangling_link_named)
{
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        char *buf = NULL, at[256], why[320], want[320];
        size_t len;
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/abs"), -ENOENT);
        ck_assert_int_eq(ng_path_why(p, -ENOENT, "/abs", at, sizeof(at), why, sizeof(why)), 0);
        ck_assert_str_eq(at, "/abs");
        snprintf(want, sizeof(want), "is a symbolic link to %s, which is not in the tree (a capture holds no links)",
                 secret);
        ck_assert_str_eq(why, want);
        /* a linked directory: the component is named */
        ck_assert_int_eq(ng_path_read(p, &buf, &len, "/dir/secret"), -ENOENT);
        ck_assert_int_eq(ng_path_why(p, -ENOENT, "/dir/secret", at, sizeof(at), why, sizeof(why)), 0);
        ck_assert_str_eq(at, "/dir");
        /* missing, or a link to a file the tree holds: nothing to say */
        ck_assert_int_eq(ng_path_why(p, -ENOENT, "/nothere", at, sizeof(at), why, sizeof(why)), -ENOENT);
        ck_assert_int_eq(ng_path_why(p, -ENOENT, "/inside/x", at, sizeof(at), why, sizeof(why)), -ENOENT);
        ck_assert_ptr_null(buf);
        ng_path_free(p);
}
END_TEST

/* Without openat2(2) (ENOSYS), links in a tree are refused, not followed;
 * ".." stays at the root. */
START_TEST(without_openat2_links_refused)
{
        int root = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(root, 0);
        int fd = ng_root_open(root, true, "/../../five", O_RDONLY | O_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(ng_root_open(root, true, "/abs", O_RDONLY | O_CLOEXEC, 0), -ELOOP);
        ck_assert_int_eq(ng_root_open(root, true, "/inside", O_RDONLY | O_CLOEXEC, 0), -ELOOP);
        ck_assert_int_eq(ng_root_open(root, true, "/dir/secret", O_RDONLY | O_CLOEXEC, 0), -ELOOP);
        ck_assert_int_eq(ng_root_open(root, true, "/abs", O_PATH | O_CLOEXEC, 0), -ELOOP);
        close(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("path");
        TCase *tc = tcase_create("cost");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, counts_whole_file_reads);
        suite_add_tcase(s, tc);
        tc = tcase_create("root");
        tcase_add_checked_fixture(tc, link_setup, link_teardown);
        tcase_add_test(tc, reads_stay_in_the_tree);
        tcase_add_test(tc, writes_stay_in_the_tree);
        tcase_add_test(tc, fifo_and_loop_named);
        tcase_add_test(tc, dangling_link_named);
        tcase_add_test(tc, without_openat2_links_refused);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}
