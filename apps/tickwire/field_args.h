// `--field NAME=VALUE` arguments of `tickwire pub`: fields/assignments.h,
// shared with the admin API's REST publish.
#pragma once
#include "fields/assignments.h"

namespace tw::cli {
using fields::build_field_list;
using fields::FieldAssignment;
using fields::parse_field_assignment;
}  // namespace tw::cli
