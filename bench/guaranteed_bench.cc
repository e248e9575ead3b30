// guaranteed_bench: the three rows of bench/guaranteed (docs/benchmarks.md,
// "Guaranteed messaging"), one mode each; every mode prints one result line of
// `key=value` fields that bench/render_guaranteed.py reads.
//
//   disk DIR --size S --seconds T [--rate R]
//       This disk's own limit, with no broker: records of S bytes appended to
//       one file by one writer doing group commit (everything that has
//       arrived, one pwrite, one fdatasync). Without --rate the records are
//       all there at once: the group-commit bandwidth (batches of 1 MiB, or
//       one record when it is larger). With --rate R they arrive at R/s and
//       each one's latency is arrival to the end of the fdatasync that made it
//       durable: the best a group-committing broker can do at that rate.
//   tickwire --port P --size S --seconds T [--rate R] [--fanout 5] [--window W] [--pid PID]
//       Guaranteed publishes (libtickwire) to topic GB/x, which queues q0..q4
//       attract, and one consumer bound to each, acknowledging every message.
//   nats --port P --size S --seconds T [--rate R] [--fanout 5] [--window W] [--pid PID]
//       The same against nats-server JetStream over its raw protocol (no
//       library): stream GB on subjects GB.>, interest retention, file storage,
//       one stream and `fanout` durable push consumers with explicit acks;
//       each publish has a reply inbox and waits for the PubAck JSON.
//
// Broker rows: publish-to-ack and publish-to-consumer latency (p50/p99), the
// messages acknowledged to the publisher per second of the trial, what the
// consumers had not yet received when publishing stopped (depth), whether a
// drain of at most --drain seconds delivered everything, and the broker's CPU
// (utime + stime of --pid over the trial).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "tickwire/client/client.h"

namespace {

struct Options {
  std::string mode, dir;
  uint16_t port = 0;
  size_t size = 1024;
  double seconds = 5, drain = 20, rate = 0;
  int fanout = 5, window = 256, consumer_window = 0, pid = 0;  // consumer_window 0: the publish window
};

double percentile_us(std::vector<uint64_t>& ns, double p) {
  if (ns.empty()) return 0;
  const size_t at = std::min(ns.size() - 1, static_cast<size_t>(p * static_cast<double>(ns.size())));
  std::nth_element(ns.begin(), ns.begin() + static_cast<long>(at), ns.end());
  return static_cast<double>(ns[at]) / 1e3;
}

double cpu_seconds(int pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields;
  size_t at = close + 2;
  while (at < stat.size() && fields.size() < 15) {
    const size_t space = stat.find(' ', at);
    fields.push_back(stat.substr(at, space - at));
    at = space == std::string::npos ? stat.size() : space + 1;
  }
  if (fields.size() < 13) return 0;  // fields[11], [12]: utime, stime (fields 14, 15 of proc(5))
  return static_cast<double>(std::stoull(fields[11]) + std::stoull(fields[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// ---- disk -------------------------------------------------------------------

void disk(const Options& o) {
  const std::string path = o.dir + "/guaranteed_disk.bench";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) std::perror(path.c_str()), std::exit(1);
  const size_t per_batch = o.rate > 0 ? 1 : std::max<size_t>(1, (1u << 20) / o.size);
  std::vector<uint8_t> buffer;
  std::vector<uint64_t> latencies, syncs;
  const uint64_t start = tw::monotonic_ns(), end = start + static_cast<uint64_t>(o.seconds * 1e9);
  const double interval_ns = o.rate > 0 ? 1e9 / o.rate : 0;
  uint64_t offset = 0, records = 0;
  while (tw::monotonic_ns() < end) {
    size_t batch = per_batch;
    if (o.rate > 0) {  // everything that has arrived by now, at least the next one
      uint64_t now = tw::monotonic_ns();
      const auto arrived = [&] { return static_cast<uint64_t>(static_cast<double>(now - start) / interval_ns) + 1; };
      while (arrived() <= records) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        now = tw::monotonic_ns();
      }
      batch = static_cast<size_t>(arrived() - records);
    }
    buffer.assign(batch * o.size, 0xAB);
    const uint64_t t0 = tw::monotonic_ns();
    if (::pwrite(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset)) != static_cast<ssize_t>(buffer.size()) ||
        ::fdatasync(fd) != 0) {
      std::perror("disk"), std::exit(1);
    }
    const uint64_t done = tw::monotonic_ns();
    syncs.push_back(done - t0);
    for (size_t i = 0; i < batch && o.rate > 0; ++i) {
      latencies.push_back(done - (start + static_cast<uint64_t>(static_cast<double>(records + i) * interval_ns)));
    }
    records += batch;
    offset += buffer.size();
    if (offset > (1ull << 30)) offset = 0;  // stay within 1 GiB of disk
  }
  const double took = static_cast<double>(tw::monotonic_ns() - start) / 1e9;
  ::close(fd);
  ::unlink(path.c_str());
  const double rate = static_cast<double>(records) / took;
  std::printf("row=disk size=%zu target_rate=%.0f rate=%.0f mbps=%.1f syncs=%zu sync_p50_us=%.1f sync_p99_us=%.1f "
              "lat_p50_us=%.1f lat_p99_us=%.1f\n",
              o.size, o.rate, rate, rate * static_cast<double>(o.size) / 1e6, syncs.size(), percentile_us(syncs, 0.5),
              percentile_us(syncs, 0.99), percentile_us(latencies, 0.5), percentile_us(latencies, 0.99));
}

// ---- what a broker row measures ---------------------------------------------

struct Trial {
  std::vector<uint64_t> ack_ns, deliver_ns;
  uint64_t published = 0, acked = 0, refused = 0, delivered = 0;
  std::string first_refusal;
};

// The payload, allocated once: a publish only writes its send time into the first 8 bytes.
const std::vector<uint8_t>& stamped(size_t size, uint64_t now) {
  static std::vector<uint8_t> payload;
  payload.resize(std::max<size_t>(size, 8), 0x5A);
  std::memcpy(payload.data(), &now, 8);
  return payload;
}
uint64_t stamp_of(const uint8_t* payload) {
  uint64_t t = 0;
  std::memcpy(&t, payload, 8);
  return t;
}

// Runs the trial: `publish()` while `may_publish()` (the window) and the pace
// allow, `pump()` the connections; then a bounded drain. Prints the row.
// When nothing can be published the driver sleeps a moment between pumps: on
// a machine of two CPUs a client spinning on a full window takes the CPU the
// broker needs to answer it.
void run_trial(const Options& o, const char* row, Trial& t, const std::function<bool()>& may_publish,
               const std::function<bool()>& publish, const std::function<void()>& pump,
               const std::function<uint64_t()>& unanswered) {
  const double cpu0 = cpu_seconds(o.pid);
  const uint64_t start = tw::monotonic_ns(), end = start + static_cast<uint64_t>(o.seconds * 1e9);
  const double interval_ns = o.rate > 0 ? 1e9 / o.rate : 0;
  while (tw::monotonic_ns() < end) {
    const uint64_t due = o.rate > 0 ? static_cast<uint64_t>(static_cast<double>(tw::monotonic_ns() - start) / interval_ns) + 1
                                    : UINT64_MAX;
    int sent = 0;
    while (sent < 64 && t.published < due && may_publish() && publish()) ++sent;
    pump();
    if (sent == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  const double took = static_cast<double>(tw::monotonic_ns() - start) / 1e9;
  const uint64_t acked_in_trial = t.acked;
  const double cpu1 = cpu_seconds(o.pid);
  // Acknowledged to the publisher and not yet received by a consumer (0 when the consumers are ahead of the acks).
  const int64_t depth = std::max<int64_t>(
      0, static_cast<int64_t>(t.acked * static_cast<uint64_t>(o.fanout)) - static_cast<int64_t>(t.delivered));
  const uint64_t drain_end = tw::monotonic_ns() + static_cast<uint64_t>(o.drain * 1e9);
  while (tw::monotonic_ns() < drain_end && (unanswered() > 0 || t.delivered < t.acked * static_cast<uint64_t>(o.fanout))) {
    pump();
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  const bool drained = unanswered() == 0 && t.delivered >= t.acked * static_cast<uint64_t>(o.fanout);
  const double drain_s = static_cast<double>(tw::monotonic_ns() - end) / 1e9;
  const double rate = static_cast<double>(acked_in_trial) / took;
  std::printf("row=%s size=%zu fanout=%d window=%d target_rate=%.0f rate=%.0f mbps=%.1f ack_p50_us=%.1f ack_p99_us=%.1f "
              "deliver_p50_us=%.1f deliver_p99_us=%.1f depth_at_end=%lld drained=%d drain_s=%.2f refused=%llu "
              "cpu_pct=%.0f seconds=%.1f%s%s\n",
              row, o.size, o.fanout, o.window, o.rate, rate, rate * static_cast<double>(o.size) / 1e6, percentile_us(t.ack_ns, 0.5),
              percentile_us(t.ack_ns, 0.99), percentile_us(t.deliver_ns, 0.5), percentile_us(t.deliver_ns, 0.99),
              static_cast<long long>(depth), drained ? 1 : 0, drain_s, static_cast<unsigned long long>(t.refused),
              o.pid > 0 ? 100.0 * (cpu1 - cpu0) / took : 0.0, took, t.first_refusal.empty() ? "" : " refusal=",
              t.first_refusal.c_str());
}

// ---- tickwired ---------------------------------------------------------------

void tickwire(const Options& o) {
  tw::client::Options co;
  co.port = o.port;
  co.guaranteed_window = static_cast<uint32_t>(o.window);
  co.max_frame = static_cast<uint32_t>(o.size) + (64u << 10);  // a delivery: the payload, its topic and header
  co.max_output_buffer = std::max<size_t>(co.max_output_buffer, (static_cast<size_t>(o.window) + 4) * (o.size + 256));
  Trial t;
  std::unordered_map<uint64_t, uint64_t> sent_at;  // message id -> when
  tw::client::Client pub;
  pub.on_publish_ack([&](const tw::client::PublishAnswer& a) {
    auto it = sent_at.find(a.message_id);
    if (it == sent_at.end()) return;
    if (a.code == tw::wire::Code::Ok) {
      ++t.acked;
      t.ack_ns.push_back(tw::monotonic_ns() - it->second);
    } else if (t.refused++ == 0) {
      t.first_refusal = std::string(a.text);
      std::replace(t.first_refusal.begin(), t.first_refusal.end(), ' ', '_');
    }
    sent_at.erase(it);
  });
  std::vector<std::unique_ptr<tw::client::Client>> consumers;
  for (int q = 0; q < o.fanout; ++q) {
    consumers.push_back(std::make_unique<tw::client::Client>());
    tw::client::Client& c = *consumers.back();
    auto bound = c.bind("q" + std::to_string(q), [&t, &c](const tw::client::QueueMessage& m) {
      ++t.delivered;
      if (m.payload.size() >= 8) t.deliver_ns.push_back(tw::monotonic_ns() - stamp_of(m.payload.data()));
      (void)c.ack(m.bind_id, m.seq);
    }, static_cast<uint32_t>(o.consumer_window > 0 ? o.consumer_window : o.window));
    if (!bound.ok()) std::fprintf(stderr, "bind: %s\n", bound.error().message.c_str()), std::exit(1);
    co.client_name = "gbench-q" + std::to_string(q);
    if (auto r = c.connect(co); !r.ok()) std::fprintf(stderr, "connect: %s\n", r.error().message.c_str()), std::exit(1);
  }
  co.client_name = "gbench-pub";
  if (auto r = pub.connect(co); !r.ok()) std::fprintf(stderr, "connect: %s\n", r.error().message.c_str()), std::exit(1);
  const std::string topic = "GB/x";
  run_trial(
      o, "tickwire", t, [&] { return pub.unanswered_publishes() < static_cast<size_t>(o.window); },
      [&] {
        const uint64_t now = tw::monotonic_ns();
        auto id = pub.publish_guaranteed(topic, stamped(o.size, now));
        if (!id) return false;  // back pressure: the output buffer is full
        sent_at[*id] = now;
        ++t.published;
        return true;
      },
      [&] {
        pub.poll(0);
        for (auto& c : consumers) c->poll(0);
      },
      [&] { return static_cast<uint64_t>(pub.unanswered_publishes()); });
}

// ---- nats-server JetStream, raw protocol --------------------------------------

class NatsConnection {
 public:
  using OnMsg = std::function<void(const std::string& subject, const std::string& reply, const uint8_t* data, size_t size)>;

  explicit NatsConnection(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::perror("nats connect"), std::exit(1);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::fcntl(fd_, F_SETFL, O_NONBLOCK);
    send("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":false,\"name\":\"gbench\"}\r\nPING\r\n");
  }
  ~NatsConnection() { ::close(fd_); }

  void on_msg(OnMsg f) { on_msg_ = std::move(f); }
  void send(const std::string& s) { out_.insert(out_.end(), s.begin(), s.end()); }
  void pub(const std::string& subject, const std::string& reply, const uint8_t* data, size_t size) {
    send("PUB " + subject + (reply.empty() ? "" : " " + reply) + " " + std::to_string(size) + "\r\n");
    out_.insert(out_.end(), data, data + size);
    send("\r\n");
  }
  size_t pending_out() const { return out_.size() - sent_; }

  // Writes what it can, reads what there is, dispatches whole messages.
  void pump(int timeout_ms = 0) {
    pollfd p{fd_, static_cast<short>(POLLIN | (pending_out() ? POLLOUT : 0)), 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return;
    if (pending_out() > 0) {
      const ssize_t n = ::send(fd_, out_.data() + sent_, pending_out(), MSG_NOSIGNAL);
      if (n > 0) sent_ += static_cast<size_t>(n);
      if (sent_ == out_.size()) out_.clear(), sent_ = 0;
    }
    uint8_t chunk[1 << 16];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n == 0) std::fprintf(stderr, "nats: connection closed\n"), std::exit(1);
      if (n < 0) break;
      in_.insert(in_.end(), chunk, chunk + n);
    }
    parse();
  }

 private:
  void parse() {
    size_t at = 0;
    for (;;) {
      auto eol = std::search(in_.begin() + static_cast<long>(at), in_.end(), crlf_, crlf_ + 2);
      if (eol == in_.end()) break;
      const std::string line(in_.begin() + static_cast<long>(at), eol);
      const size_t body = static_cast<size_t>(eol - in_.begin()) + 2;
      if (line.rfind("MSG ", 0) == 0) {
        std::vector<std::string> f;
        for (size_t s = 4, e; s <= line.size(); s = e + 1) {
          e = line.find(' ', s);
          if (e == std::string::npos) e = line.size();
          f.push_back(line.substr(s, e - s));
        }
        const size_t size = std::stoul(f.back());
        if (in_.size() < body + size + 2) break;  // the payload has not all come
        if (on_msg_) on_msg_(f[0], f.size() == 4 ? f[2] : "", in_.data() + body, size);
        at = body + size + 2;
        continue;
      }
      if (line == "PING") send("PONG\r\n");
      if (line.rfind("-ERR", 0) == 0) std::fprintf(stderr, "nats: %s\n", line.c_str());
      at = body;
    }
    in_.erase(in_.begin(), in_.begin() + static_cast<long>(at));
  }

  static constexpr char crlf_[2] = {'\r', '\n'};
  int fd_ = -1;
  std::vector<uint8_t> in_, out_;
  size_t sent_ = 0;
  OnMsg on_msg_;
};

// A request on the JetStream API and its answer (the setup, before the trial).
std::string request(NatsConnection& c, const std::string& subject, const std::string& body) {
  static int n = 0;
  const std::string inbox = "_INBOX.setup." + std::to_string(++n);
  std::string answer;
  bool done = false;
  c.on_msg([&](const std::string& s, const std::string&, const uint8_t* d, size_t size) {
    if (s == inbox) answer.assign(reinterpret_cast<const char*>(d), size), done = true;
  });
  c.send("SUB " + inbox + " 9" + std::to_string(n) + "\r\n");
  c.pub(subject, inbox, reinterpret_cast<const uint8_t*>(body.data()), body.size());
  const uint64_t deadline = tw::monotonic_ns() + 10'000'000'000ull;
  while (!done && tw::monotonic_ns() < deadline) c.pump(10);
  if (!done || answer.find("\"error\"") != std::string::npos) {
    std::fprintf(stderr, "nats %s: %s\n", subject.c_str(), done ? answer.c_str() : "no answer"), std::exit(1);
  }
  return answer;
}

void nats(const Options& o) {
  NatsConnection pub(o.port), sub(o.port);
  request(pub, "$JS.API.STREAM.CREATE.GB",
          "{\"name\":\"GB\",\"subjects\":[\"GB.>\"],\"storage\":\"file\",\"retention\":\"interest\","
          "\"discard\":\"old\",\"num_replicas\":1,\"max_msg_size\":-1}");
  for (int q = 0; q < o.fanout; ++q) {
    const std::string name = "c" + std::to_string(q);
    request(pub, "$JS.API.CONSUMER.DURABLE.CREATE.GB." + name,
            "{\"stream_name\":\"GB\",\"config\":{\"durable_name\":\"" + name + "\",\"deliver_subject\":\"deliver." + name +
                "\",\"ack_policy\":\"explicit\",\"deliver_policy\":\"all\",\"max_ack_pending\":" +
                std::to_string(o.consumer_window > 0 ? o.consumer_window : o.window) + ",\"ack_wait\":60000000000}}");
    sub.send("SUB deliver." + name + " " + std::to_string(q + 1) + "\r\n");
  }
  Trial t;
  std::unordered_map<uint64_t, uint64_t> sent_at;  // publish number -> when
  pub.send("SUB _INBOX.gb.* 1\r\n");
  pub.on_msg([&](const std::string& subject, const std::string&, const uint8_t* d, size_t size) {
    const uint64_t n = std::stoull(subject.substr(subject.rfind('.') + 1));
    auto it = sent_at.find(n);
    if (it == sent_at.end()) return;
    const std::string answer(reinterpret_cast<const char*>(d), size);
    if (answer.find("\"error\"") == std::string::npos) {
      ++t.acked;
      t.ack_ns.push_back(tw::monotonic_ns() - it->second);
    } else if (t.refused++ == 0) {
      t.first_refusal = answer;
      std::replace(t.first_refusal.begin(), t.first_refusal.end(), ' ', '_');
    }
    sent_at.erase(it);
  });
  sub.on_msg([&](const std::string&, const std::string& reply, const uint8_t* d, size_t size) {
    ++t.delivered;
    if (size >= 8) t.deliver_ns.push_back(tw::monotonic_ns() - stamp_of(d));
    sub.send("PUB " + reply + " 0\r\n\r\n");  // an empty message to the reply subject acknowledges
  });
  run_trial(
      o, "nats", t, [&] { return sent_at.size() < static_cast<size_t>(o.window) && pub.pending_out() < (8u << 20); },
      [&] {
        const uint64_t now = tw::monotonic_ns(), n = ++t.published;
        const auto& payload = stamped(o.size, now);
        sent_at[n] = now;
        pub.pub("GB.x", "_INBOX.gb." + std::to_string(n), payload.data(), payload.size());
        return true;
      },
      [&] {
        pub.pump(0);
        sub.pump(0);
      },
      [&] { return static_cast<uint64_t>(sent_at.size()); });
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (argc < 2) {
    std::fprintf(stderr, "usage: guaranteed_bench disk DIR | tickwire | nats  [--port P] [--size S] [--seconds T] "
                         "[--rate R] [--fanout N] [--window W] [--drain S] [--pid PID]\n");
    return 2;
  }
  o.mode = argv[1];
  int i = 2;
  if (o.mode == "disk" && argc > 2) o.dir = argv[i++];
  for (; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--port") o.port = static_cast<uint16_t>(std::stoi(value));
    else if (flag == "--size") o.size = std::stoul(value);
    else if (flag == "--seconds") o.seconds = std::stod(value);
    else if (flag == "--rate") o.rate = std::stod(value);
    else if (flag == "--fanout") o.fanout = std::stoi(value);
    else if (flag == "--window") o.window = std::stoi(value);
    else if (flag == "--consumer-window") o.consumer_window = std::stoi(value);
    else if (flag == "--drain") o.drain = std::stod(value);
    else if (flag == "--pid") o.pid = std::stoi(value);
    else return std::fprintf(stderr, "unknown option %s\n", flag.c_str()), 2;
  }
  if (o.mode == "disk") disk(o);
  else if (o.mode == "tickwire") tickwire(o);
  else if (o.mode == "nats") nats(o);
  else return std::fprintf(stderr, "unknown mode %s\n", o.mode.c_str()), 2;
  return 0;
}
