"""Command line: `python -m vkdiff doctor` (see vkdiff/doctor.py)."""
import sys

from .doctor import main as doctor

USAGE = '''usage: python -m vkdiff doctor

  doctor   check this machine for what vkdiff needs (Vulkan devices with their features and
           limits, spirv-tools, the cache folder) and say how to install what is missing'''


def main(argv):
    if argv[:1] == ['doctor'] and len(argv) == 1:
        return doctor()
    print(USAGE, file=sys.stderr if argv not in ([], ['-h'], ['--help']) else sys.stdout)
    return 0 if argv in (['-h'], ['--help']) else 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
