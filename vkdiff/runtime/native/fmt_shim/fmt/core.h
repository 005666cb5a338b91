// See format.h: a stand-in for {fmt}, enough for Kompute 0.9.0.
#pragma once
#include "format.h"
