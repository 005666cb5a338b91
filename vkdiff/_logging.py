"""Face floor: `ti._logging` (Taichi 1.7.4's python/taichi/_logging.py, which Genesis imports):
the log level (`set_logging_level`, `is_logging_effective`, shared with ti.init(log_level=...)
and TI_LOG_LEVEL, lang/init_config.py) and the level functions `trace` ... `critical`, which
print `[file:function@line] message` to stderr when their level is effective."""
import inspect
import os
import sys

from .lang import init_config as _cfg

TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL = 'trace', 'debug', 'info', 'warn', 'error', 'critical'
supported_log_levels = list(_cfg.LEVELS)


def set_logging_level(level):
    """Messages of `level` and above are shown ('trace' < 'debug' < 'info' < 'warn' < 'error'
    < 'critical'; the default is 'info')."""
    _cfg.set_log_level(level)


def is_logging_effective(level):
    """Whether messages of `level` are shown at the current level."""
    return _cfg.log_effective(level)


def _get_logging(name):
    """The logger function of level `name`: msg.format(*args, **kwargs) with its caller's place."""
    def logger(msg, *args, **kwargs):
        if _cfg.log_effective(name):
            text = msg.format(*args, **kwargs) if args or kwargs else str(msg)
            frame = inspect.currentframe().f_back
            info = inspect.getframeinfo(frame)
            print(f'[{name[0].upper()}] [{os.path.basename(info.filename)}:{info.function}'
                  f'@{info.lineno}] {text}', file=sys.stderr)
    logger.__name__ = name
    return logger


trace, debug, info, warn, error, critical = (_get_logging(n) for n in _cfg.LEVELS)

__all__ = ['DEBUG', 'CRITICAL', 'ERROR', 'INFO', 'TRACE', 'WARN', 'set_logging_level',
           'is_logging_effective', 'trace', 'debug', 'info', 'warn', 'error', 'critical']
