# CMake toolchain file used (through the CMAKE_TOOLCHAIN_FILE environment
# variable) while `pip install kp==0.9.0` builds Kompute's Python wheel from the
# sdist. It makes that build offline and consistent with Debian's packages:
#  - use the system Vulkan headers, fmt and pybind11 instead of FetchContent
#    downloads from GitHub (KOMPUTE_OPT_USE_BUILT_IN_* OFF);
#  - install nothing (KOMPUTE_OPT_INSTALL OFF);
#  - skip the vulkaninfo-based driver version check (kp's setup.py means to pass
#    -DKOMPUTE_OPT_DISABLE_VULKAN_VERSION_CHECK=ON but a missing comma glues it to
#    -DPYTHON_EXECUTABLE=..., which drops both flags);
#  - so PYTHON_EXECUTABLE is set here, from $VKDIFF_KP_PYTHON (the venv python).
set(KOMPUTE_OPT_USE_BUILT_IN_VULKAN_HEADER OFF CACHE BOOL "" FORCE)
set(KOMPUTE_OPT_USE_BUILT_IN_FMT OFF CACHE BOOL "" FORCE)
set(KOMPUTE_OPT_USE_BUILT_IN_PYBIND11 OFF CACHE BOOL "" FORCE)
set(KOMPUTE_OPT_INSTALL OFF CACHE BOOL "" FORCE)
set(KOMPUTE_OPT_DISABLE_VULKAN_VERSION_CHECK ON CACHE BOOL "" FORCE)
set(CMAKE_POSITION_INDEPENDENT_CODE ON CACHE BOOL "" FORCE)
if(DEFINED ENV{VKDIFF_KP_PYTHON})
  set(PYTHON_EXECUTABLE "$ENV{VKDIFF_KP_PYTHON}" CACHE FILEPATH "" FORCE)
endif()
