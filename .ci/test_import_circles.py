"""The circle check's own tests: small crates with a known answer each.

Run: python3 .ci/test_import_circles.py (make test runs it with the lints).
"""
import os, sys, tempfile, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from import_circles import check, circles, graph, upward  # noqa: E402


def crate(files):
    """A crate in a temporary directory: {path: text}."""
    root = tempfile.mkdtemp(prefix='circles-')
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)
    return root


def found(files, layers=()):
    _, edges = graph(crate(files))
    return ['/'.join('/'.join(m) for m in c) for c in circles(edges)], upward(edges, layers)


class Circles(unittest.TestCase):
    def test_two_files_importing_each_other_by_crate_paths(self):
        c, _ = found({'lib.rs': 'mod a; mod b;', 'a.rs': 'use crate::b::B;', 'b.rs': 'use crate::a::A;'})
        self.assertEqual(c, ['a/b'])

    def test_a_tree_without_a_circle(self):
        c, _ = found({'lib.rs': 'mod a; mod b;', 'a.rs': 'use crate::b::B;', 'b.rs': 'pub struct B;'})
        self.assertEqual(c, [])

    def test_super_in_a_file_that_is_not_mod_rs_names_its_folder(self):
        # area/one.rs's `super::` is `area`, not the crate root.
        c, _ = found({'lib.rs': 'mod area;', 'area/mod.rs': 'mod one; mod two;',
                      'area/one.rs': 'use super::two::Two;', 'area/two.rs': 'use super::one::One;'})
        self.assertEqual(c, ['area/one/area/two'])

    def test_super_super_climbs_two_levels(self):
        c, _ = found({'lib.rs': 'mod top; mod area;', 'top.rs': 'use crate::area::deep::one::One;',
                      'area/mod.rs': 'pub mod deep;', 'area/deep/mod.rs': 'pub mod one;',
                      'area/deep/one.rs': 'use super::super::super::top::Top;'})
        self.assertEqual(c, ['area/deep/one/top'])

    def test_self_in_a_plain_file_is_that_file(self):
        c, _ = found({'lib.rs': 'mod a; mod b;', 'a.rs': 'fn f() { self::g() } fn g() {}',
                      'b.rs': 'use crate::a::A;'})
        self.assertEqual(c, [])

    def test_self_in_mod_rs_names_the_folders_files(self):
        c, _ = found({'lib.rs': 'mod area;', 'area/mod.rs': 'mod one; use self::one::One; pub struct Top;',
                      'area/one.rs': 'use super::Top;'})
        self.assertEqual(c, ['area/area/one'])

    def test_a_re_export_leads_to_the_file_that_defines_the_item(self):
        c, _ = found({'lib.rs': 'mod area;', 'area/mod.rs': 'mod one; mod two; pub use one::Thing;',
                      'area/one.rs': 'pub struct Thing; use super::two::Other;',
                      'area/two.rs': 'pub struct Other; use super::Thing;'})
        self.assertEqual(c, ['area/one/area/two'])

    def test_a_test_module_is_not_an_import(self):
        c, _ = found({'lib.rs': 'mod a; mod b;', 'a.rs': 'use crate::b::B;',
                      'b.rs': 'pub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n    fn f() { let s = "{"; }\n}\n'})
        self.assertEqual(c, [])

    def test_a_test_module_in_a_file_of_its_own_is_not_an_import(self):
        # rules/quota.rs's tests, in rules/quota/tests.rs, may import a page.
        files = {'lib.rs': 'mod pages; mod rules;', 'pages.rs': 'use crate::rules::quota::Q;',
                 'rules/mod.rs': 'pub mod quota;', 'rules/quota.rs': 'pub struct Q;\n#[cfg(test)]\nmod tests;\n',
                 'rules/quota/tests.rs': 'use crate::pages::P;\n'}
        self.assertEqual(found(files, ('pages', 'rules')), ([], []))
        # The same file declared without cfg(test) is code: an upward import and a circle.
        files['rules/quota.rs'] = 'pub struct Q;\nmod tests;\n'
        files['pages.rs'] = 'use crate::rules::quota::tests::T;'
        c, up = found(files, ('pages', 'rules'))
        self.assertEqual((c, up), (['pages/rules/quota/tests'], [(('rules', 'quota', 'tests'), ('pages',))]))

    def test_code_after_a_test_module_still_counts(self):
        c, _ = found({'lib.rs': 'mod a; mod b;', 'a.rs': 'use crate::b::B;',
                      'b.rs': '#[cfg(test)]\nmod tests { fn f() { if true { } } }\nuse crate::a::A;\n'})
        self.assertEqual(c, ['a/b'])

    def test_comments_are_not_imports(self):
        c, _ = found({'lib.rs': 'mod a; mod b;', 'a.rs': 'use crate::b::B;', 'b.rs': '// use crate::a::A;'})
        self.assertEqual(c, [])


class Upward(unittest.TestCase):
    LAYERS = ['pages', 'rules', 'model']

    def test_a_lower_layer_importing_a_higher_one_is_named(self):
        _, up = found({'lib.rs': 'mod model; mod rules;', 'model/mod.rs': 'mod fit;',
                       'model/fit.rs': 'use crate::rules::fit::estimate;', 'rules/mod.rs': 'pub mod fit;',
                       'rules/fit.rs': 'use crate::model::Kind;'}, self.LAYERS)
        self.assertEqual(up, [(('model', 'fit'), ('rules', 'fit'))])

    def test_imports_that_point_down_or_sideways_pass(self):
        _, up = found({'lib.rs': 'mod pages; mod rules; mod model; mod codec;',
                       'pages/mod.rs': 'use crate::rules::R; use crate::codec::C;',
                       'rules/mod.rs': 'use crate::model::M; use crate::codec::C;', 'model/mod.rs': 'pub struct M;',
                       'codec.rs': 'use crate::pages::P;'}, self.LAYERS)
        self.assertEqual(up, [])

    def test_the_command_fails_on_either(self):
        root = crate({'lib.rs': 'mod rules; mod model;', 'rules/mod.rs': 'pub struct R;',
                      'model/mod.rs': 'use crate::rules::R;'})
        self.assertEqual(check(root, ['rules', 'model']), 1)
        self.assertEqual(check(root), 0)


if __name__ == '__main__':
    unittest.main()
