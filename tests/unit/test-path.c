/* The path layer's read cost: a counting copy of a path counts the files it
 * reads whole and their bytes, nothing else, and reads what its original
 * reads (same root, same refused paths). */

#include <sys/stat.h>
#include <unistd.h>

#include "ng-test.h"
#include "path-internal.h"

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
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
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

int main(void)
{
        Suite *s = suite_create("path");
        TCase *tc = tcase_create("cost");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, counts_whole_file_reads);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}
