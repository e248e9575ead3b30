// LoginHandoff: a password checked off the loop thread, by the authority's
// verifiers (auth/authority.h), queued under the peer's address. The
// session pauses its input meanwhile and polls on each tick until the answer
// comes. Owned by the loop thread.
#pragma once
#include <memory>
#include <optional>
#include <string_view>

#include "auth/authority.h"

namespace tw::session {

class LoginHandoff {
 public:
  struct Answer {
    std::shared_ptr<const auth::Grants> grants;  // null: refused
    const char* error = "";                      // why, for the client
  };

  void begin(auth::Authority& authority, std::string_view user, std::string_view password, std::string_view peer);
  bool pending() const { return login_ != nullptr; }
  // The answer once the verifier gave it (then no longer pending). Grants
  // come refreshed under the users file in force now: a reload during the
  // check is not missed.
  std::optional<Answer> poll(auth::Authority& authority);
  // The last refusal was "busy" (too many logins from this address, or in
  // all), not a checked password.
  bool was_busy() const { return busy_; }

 private:
  std::shared_ptr<auth::Login> login_;  // in flight
  bool busy_ = false;
};

}  // namespace tw::session
