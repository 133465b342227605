"""Root of the test run: the real packages first, then the shared fixtures for every test folder.

pytest's importlib mode names a test module after its path (``salamander_control/test/...`` becomes
``salamander_control.test...``) and would otherwise put an empty stand-in for ``salamander_control`` into
``sys.modules``; importing the packages here first keeps the real ones.
"""

import salamander_behavior  # noqa: F401
import salamander_bringup  # noqa: F401
import salamander_control  # noqa: F401
import salamander_sim  # noqa: F401
import salamander_teleop  # noqa: F401
import salamander_testing  # noqa: F401
import salamander_view  # noqa: F401
from salamander_testing.fixtures import *  # noqa: F403
