"""Test helper: the `requires` marker's check (tests/conftest.py applies it to every device test;
see its docstring for how a test declares the device features it needs)."""


def required_features(node):
    """The feature names the `requires` markers of the pytest item `node` give, in order."""
    return [f for m in node.iter_markers('requires') for f in m.args]


def missing_features(node, features):
    """The features the `requires` markers of `node` name that `features` (a device's
    ti.device_features()) lacks, sorted; a name that is not a feature is an error (a typo)."""
    needed = required_features(node)
    unknown = sorted({f for f in needed if f not in features})
    if unknown:
        raise ValueError(f'requires({", ".join(map(repr, unknown))}): not a device feature; '
                         f'the features are {", ".join(sorted(features))}')
    return sorted({f for f in needed if not features[f]})
