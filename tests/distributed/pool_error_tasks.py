"""Task functions for test_pool_errors.py (workers import them by module and name)."""


class NeedsTwo(Exception):
    """Pickles, but does not unpickle: its __init__ takes other arguments than its args."""

    def __init__(self, a, b):
        super().__init__(f'{a}-{b}')


class WontPickle(Exception):
    def __reduce__(self):
        raise TypeError('WontPickle does not pickle')


def square(x):
    return x * x


def raise_needs_two(x):
    if x == 2:
        raise NeedsTwo(1, 2)
    return x


def raise_wont_pickle(x):
    if x == 1:
        raise WontPickle('w')
    return x


def failing_init():
    raise ValueError('init failed on purpose')
