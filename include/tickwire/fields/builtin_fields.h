// The built-in field table: common market-data fields with their conventional
// RDM ids. The names and ids match what LSEG/Refinitiv feeds publish, so a
// client used to RDM reads ours without a dictionary file. Date fields are
// carried as TIME (midnight UTC of the date) since field lists have no date type.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

#include "tickwire/fields/field_list.h"

namespace tw::fields {

struct BuiltinField {
  std::string_view name;
  uint16_t id;
  FieldType type;
};

inline constexpr std::array kBuiltinFields = {
    BuiltinField{"PROD_PERM", 1, FieldType::Int},
    BuiltinField{"RDNDISPLAY", 2, FieldType::Int},
    BuiltinField{"DSPLY_NAME", 3, FieldType::String},
    BuiltinField{"TIMACT", 5, FieldType::Time},
    BuiltinField{"TRDPRC_1", 6, FieldType::Decimal},
    BuiltinField{"TRDPRC_2", 7, FieldType::Decimal},
    BuiltinField{"TRDPRC_3", 8, FieldType::Decimal},
    BuiltinField{"TRDPRC_4", 9, FieldType::Decimal},
    BuiltinField{"TRDPRC_5", 10, FieldType::Decimal},
    BuiltinField{"NETCHNG_1", 11, FieldType::Decimal},
    BuiltinField{"HIGH_1", 12, FieldType::Decimal},
    BuiltinField{"LOW_1", 13, FieldType::Decimal},
    BuiltinField{"CURRENCY", 15, FieldType::String},
    BuiltinField{"TRADE_DATE", 16, FieldType::Time},
    BuiltinField{"ACTIV_DATE1", 17, FieldType::Time},
    BuiltinField{"TRDTIM_1", 18, FieldType::Time},
    BuiltinField{"OPEN_PRC", 19, FieldType::Decimal},
    BuiltinField{"HST_CLOSE", 21, FieldType::Decimal},
    BuiltinField{"BID", 22, FieldType::Decimal},
    BuiltinField{"BID_1", 23, FieldType::Decimal},
    BuiltinField{"BID_2", 24, FieldType::Decimal},
    BuiltinField{"ASK", 25, FieldType::Decimal},
    BuiltinField{"ASK_1", 26, FieldType::Decimal},
    BuiltinField{"ASK_2", 27, FieldType::Decimal},
    BuiltinField{"NEWS", 28, FieldType::String},
    BuiltinField{"NEWS_TIME", 29, FieldType::Time},
    BuiltinField{"BIDSIZE", 30, FieldType::Int},
    BuiltinField{"ASKSIZE", 31, FieldType::Int},
    BuiltinField{"ACVOL_1", 32, FieldType::Int},
    BuiltinField{"PCTCHNG", 56, FieldType::Decimal},
    BuiltinField{"OPINT_1", 64, FieldType::Int},
    BuiltinField{"NUM_MOVES", 77, FieldType::Int},
    BuiltinField{"YRHIGH", 90, FieldType::Decimal},
    BuiltinField{"YRLOW", 91, FieldType::Decimal},
    BuiltinField{"TURNOVER", 100, FieldType::Decimal},
    BuiltinField{"MID_PRICE", 134, FieldType::Decimal},
    BuiltinField{"TRDVOL_1", 178, FieldType::Int},
    BuiltinField{"SALTIM", 379, FieldType::Time},
    BuiltinField{"SEQNUM", 1021, FieldType::Int},
    BuiltinField{"QUOTIM", 1025, FieldType::Time},
    BuiltinField{"VWAP", 3404, FieldType::Decimal},
};

}  // namespace tw::fields
