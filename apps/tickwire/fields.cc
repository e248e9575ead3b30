// tickwire fields [--http HOST:PORT] [--json]
// The field dictionary: each field's id, name and type, by id. The broker's
// (the built-in one and its fields_file, over its admin API) when it answers;
// else, with a note on stderr, this client's own (--dictionary or built-in),
// which is then also what pub, sub and snapshot use.
#include <algorithm>
#include <cstdio>

#include "fields/json.h"
#include "common.h"

namespace tw::cli {

namespace {

struct FieldsOptions {
  std::string http;  // "" = admin_target's default
  bool json = false;
};

void print_table(const fields::Dictionary& dict) {
  std::vector<const fields::FieldDef*> by_id;
  for (const fields::FieldDef& def : dict.all()) by_id.push_back(&def);
  std::sort(by_id.begin(), by_id.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  size_t width = 4;
  for (const fields::FieldDef* def : by_id) width = std::max(width, def->name.size());
  std::printf("%5s  %-*s  %s\n", "ID", static_cast<int>(width), "NAME", "TYPE");
  for (const fields::FieldDef* def : by_id) {
    std::printf("%5u  %-*s  %s\n", static_cast<unsigned>(def->id), static_cast<int>(width), def->name.c_str(),
                fields::type_name(def->type));
  }
}

int run_fields(const FieldsOptions& opts, const CommonOptions& common) {
  fields::Dictionary local;
  const fields::Dictionary* shown = nullptr;
  auto from_broker = common.dictionary_file.empty() ? broker_dictionary(common, opts.http)
                                                    : Result<fields::Dictionary>(Error{"--dictionary given"});
  if (from_broker) {
    shown = &*from_broker;
  } else {
    auto own = dictionary(common);
    if (!own) {
      std::fprintf(stderr, "tickwire fields: %s\n", own.error().message.c_str());
      return kExitError;
    }
    if (common.dictionary_file.empty()) {
      std::fprintf(stderr, "tickwire fields: %s; this is the built-in dictionary, not the broker's\n",
                   from_broker.error().message.c_str());
    }
    shown = *own;
  }
  if (opts.json) {
    std::printf("%s\n", fields::dictionary_json(*shown).c_str());
  } else {
    print_table(*shown);
  }
  return kExitOk;
}

}  // namespace

void add_fields_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<FieldsOptions>();
  CLI::App* cmd = app.add_subcommand("fields", "list the field dictionary: ids, names, types (the broker's)");
  cmd->add_option("--http", opts->http,
                  "the broker's HTTP listener, HOST:PORT (default: $TICKWIRE_HTTP, else the host of --server / "
                  "$TICKWIRE_SERVER, port 9401)");
  cmd->add_flag("--json", opts->json, "print {\"fields\":[{\"id\":..,\"name\":..,\"type\":..}]}");
  cmd->callback([opts, &common, &exit_code] { exit_code = run_fields(*opts, common); });
}

}  // namespace tw::cli
