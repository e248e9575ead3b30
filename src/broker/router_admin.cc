// What an administrator may do to a channel (docs/operations.md, admin API).
#include "broker/router.h"

namespace tw::broker {

Outcome Router::close_by_admin(std::string_view topic) {
  owner_.check("Router");
  cache::Channel* ch = channels_.find(topic);
  if (ch == nullptr) return {wire::Code::NotFound, "no such channel"};
  if (upstream_) return {wire::Code::NotFound, "a mirror does not own its channels"};
  detach_provider(*ch, /*send_release=*/true);  // the provider is told, as when its last subscriber leaves
  close_channel(*ch, wire::Code::ClosedByAdmin, "closed by an administrator");
  consider_freeing(*ch);
  return {};
}

}  // namespace tw::broker
