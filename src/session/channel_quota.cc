#include "session/channel_quota.h"

namespace tw::session {

ChannelQuota::~ChannelQuota() {
  if (user_) user_->fetch_sub(user_created_, std::memory_order_relaxed);
}

broker::Advertiser ChannelQuota::ask(broker::Outlet* outlet, const config::Limits& limits,
                                     const auth::Grants* grants, auth::Authority* authority) {
  broker::Advertiser by{outlet};
  user_refused_ = user_taken_ = false;
  if (created_ >= limits.max_channels_per_connection) {
    by.may_create = false;
    by.refusal = "this connection created max_channels_per_connection channels already";
    return by;
  }
  const uint32_t user_limit = grants && grants->max_channels() ? grants->max_channels() : limits.max_channels_per_user;
  if (!grants || !authority || user_limit == 0) return by;
  if (!user_) user_ = authority->channels_created().of(grants->user());
  user_taken_ = auth::take_below(*user_, user_limit);
  if (!user_taken_) {
    by.may_create = false;
    by.refusal = "this user's connections created their max_channels channels already";
    user_refused_ = true;
  }
  return by;
}

bool ChannelQuota::settle(const broker::Advertiser& by) {
  if (by.created) {
    ++created_;
    user_created_ += user_taken_;
  } else if (user_taken_) {
    user_->fetch_sub(1, std::memory_order_relaxed);
  }
  user_taken_ = false;
  return user_refused_;
}

}  // namespace tw::session
