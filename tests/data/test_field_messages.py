"""What a field's messages say: its name comes from the user's assignment (errors, IR and tape
graphs show it), and a field of a destroyed tree says so."""
import vkdiff as ti


def test_statements_on_one_line_name_their_own_fields():
    # before: all three were named 'a' (the line's first assignment), so an error about b or c
    # named a: "index 3 out of range [0, 3) in field a" for b[0, 3]
    a = ti.field(ti.f32); b = ti.Vector.field(2, ti.f32, shape=2); c = ti.ndarray(ti.f32, 3)  # noqa: E702
    d = ti.field(ti.f32, shape=1)
    assert (a.name, b.name, c.name, d.name) == ('a', 'b', 'c', 'd')


def test_a_field_of_a_destroyed_tree_says_so():
    """Taichi 1.7.4 aborts the process (struct_llvm.cpp get_stub assertion); vkdiff said 'field
    x has no shape yet: place it with ...', as if it had never been placed."""
    import numpy as np
    import pytest
    fb = ti.FieldsBuilder()
    x = ti.field(ti.f32)
    fb.dense(ti.i, 3).place(x)
    tree = fb.finalize()
    x.fill(2)
    np.testing.assert_array_equal(x.to_numpy(), [2, 2, 2])
    tree.destroy()
    with pytest.raises(ti.VkdiffError, match='field x is gone: its SNode tree was destroyed'):
        x.to_numpy()


def test_an_unknown_keyword_is_a_type_error():
    """Taichi 1.7.4: TypeError ("_field() got an unexpected keyword argument 'needs_grads'");
    vkdiff dropped it unseen, so a misspelt needs_grad= made a field without a gradient."""
    import pytest
    with pytest.raises(TypeError, match="unexpected keyword argument 'needs_grads'"):
        ti.field(ti.f32, shape=3, needs_grads=True)
