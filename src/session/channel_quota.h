// ChannelQuota: the new channels one connection may create (a native
// REGISTER, an MQTT PUBLISH of a topic that does not exist yet), under two
// bounds (docs/configuration.md):
//   - its own, limits.max_channels_per_connection, over its life;
//   - its user's, users.NAME.max_channels or limits.max_channels_per_user,
//     over the user's open connections together (anonymous connections are
//     one user), so that more connections do not buy a user more of
//     max_channels. A closing connection gives its channels back to its user.
// Asked per REGISTER of a new publish id, never per message.
#pragma once
#include <cstdint>

#include "auth/authority.h"
#include "auth/entitlements.h"
#include "broker/outlet.h"
#include "config/config.h"

namespace tw::session {

class ChannelQuota {
 public:
  ChannelQuota() = default;
  ~ChannelQuota();
  ChannelQuota(const ChannelQuota&) = delete;
  ChannelQuota& operator=(const ChannelQuota&) = delete;

  // Before advertising: may `outlet` create a channel (the user's share is
  // taken now, exactly across threads, and given back by settle() if no
  // channel was created)? `grants` null: authentication is off, no user bound.
  broker::Advertiser ask(broker::Outlet* outlet, const config::Limits& limits, const auth::Grants* grants,
                         auth::Authority* authority);
  // After advertising; true when the user's bound refused it.
  bool settle(const broker::Advertiser& by);

 private:
  uint32_t created_ = 0;      // channels this connection created
  uint32_t user_created_ = 0; // of them, counted in user_
  bool user_refused_ = false;
  bool user_taken_ = false;   // ask() took one from user_ that settle() keeps or gives back
  auth::UserCounters::Counter user_;
};

}  // namespace tw::session
