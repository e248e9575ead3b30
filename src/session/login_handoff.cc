#include "session/login_handoff.h"

#include <utility>

namespace tw::session {

void LoginHandoff::begin(auth::Authority& authority, std::string_view user, std::string_view password,
                         std::string_view peer) {
  login_ = authority.authenticate(user, password, auth::address_of(peer));
}

std::optional<LoginHandoff::Answer> LoginHandoff::poll(auth::Authority& authority) {
  if (!login_ || !login_->done.load(std::memory_order_acquire)) return std::nullopt;
  const std::shared_ptr<auth::Login> login = std::move(login_);
  busy_ = login->busy;
  Answer answer;
  answer.grants = login->grants ? authority.refresh(*login->grants) : nullptr;
  answer.error = login->grants && !answer.grants ? "the user was removed from the users file" : login->error;
  return answer;
}

}  // namespace tw::session
