"""A field's name comes from the user's assignment (errors, IR and tape graphs show it): several
statements on one line each name their own field."""
import vkdiff as ti


def test_statements_on_one_line_name_their_own_fields():
    # before: all three were named 'a' (the line's first assignment), so an error about b or c
    # named a: "index 3 out of range [0, 3) in field a" for b[0, 3]
    a = ti.field(ti.f32); b = ti.Vector.field(2, ti.f32, shape=2); c = ti.ndarray(ti.f32, 3)  # noqa: E702
    d = ti.field(ti.f32, shape=1)
    assert (a.name, b.name, c.name, d.name) == ('a', 'b', 'c', 'd')
