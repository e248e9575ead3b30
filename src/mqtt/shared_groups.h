// SharedGroups: the members of each shared subscription group
// (`$share/GROUP/filter`, MQTT 5 4.8.2), so that each message of the
// group's filter reaches one member of the group.
//
// Balanced per channel, like providers serve channels: every member
// subscribes to the filter's patterns as usual, and a member takes a
// channel's messages when the channel's topic hashes to its place in the
// group (hash % size == index). So a channel's stream stays in order at one
// member (an instrument is handled by one worker, its updates never race
// each other across workers), and the choice costs two relaxed atomic
// loads and a hash per delivery, no lock and no cross-thread message:
// members may live on different loop threads. Round-robin per message
// would spread one busy channel but reorder it across members, which
// market data cannot use; least-loaded would need every member's queue
// depth on every thread.
//
// A group is one user's: the key names the user with the share name and
// filter, so members of different users never form one group. Were they
// one, a channel that hashes to a member whose user may not receive it
// would reach no member at all; per user, each user's group gets every
// message that user may receive.
//
// When a member joins or leaves, every member's place and the group's size
// change together (under the mutex, at SUBSCRIBE, UNSUBSCRIBE and a
// connection's end only); channels then move between members. A message
// fanned out while the numbers change may reach two members or none.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tw::mqtt {

class SharedGroups {
 public:
  // One member's view of its group: written under the mutex, read per message.
  struct Member {
    std::atomic<uint32_t> index{0};
    std::atomic<uint32_t> size{1};
    // Whether this member takes the channel `topic`'s messages.
    bool owns(std::string_view topic) const;
  };

  // The key of `user`'s group `share` ("GROUP/filter": share name and filter).
  static std::string key(std::string_view user, std::string_view share);
  // Joins the group `key`; the member lives until leave().
  Member* join(const std::string& key);
  void leave(const std::string& key, Member* member);
  size_t members(const std::string& key);

 private:
  void renumber(std::vector<std::unique_ptr<Member>>& group);

  std::mutex mutex_;
  std::unordered_map<std::string, std::vector<std::unique_ptr<Member>>> groups_;
};

}  // namespace tw::mqtt
