// The whole C++ API of smla.
#pragma once

#include "smla/format.hpp"
#include "smla/ops.hpp"
#include "smla/status.hpp"
#include "smla/tensor.hpp"
