// aqmlab's htsim driver: the fat-tree permutation of benches/bench_fabric_htsim.py in htsim
// (Broadcom/csg-htsim), with htsim's own FatTreeTopology, ECN queues and DCTCP.
//
// Build against a user-provided htsim build (HTSIM_DIR = its sim/ folder, where
// `make libhtsim.a` ran):
//   g++ -O3 -std=c++17 -I$HTSIM_DIR -I$HTSIM_DIR/datacenter fattree.cpp \
//       $HTSIM_DIR/datacenter/fat_tree_topology.cpp $HTSIM_DIR/datacenter/fat_tree_switch.cpp \
//       $HTSIM_DIR/datacenter/firstfit.cpp $HTSIM_DIR/libhtsim.a -o htsim_fattree
// Run: htsim_fattree K RATE_GBPS BUFFER_PKTS FLOW_BYTES PKT_BYTES DURATION_S SEED
//
// Network: FatTreeTopology(k^3/4 hosts, RATE, BUFFER packets per switch queue, ECN queues),
// htsim's 1 us per link and no switching latency; htsim's ECN queue marks CE at dequeue when
// more than 15 packets are queued (its fat tree's fixed threshold). Traffic: a random
// permutation (every host sends one FLOW_BYTES flow to one other host, all starting at 0),
// each flow on one of its shortest paths chosen at random (htsim's per-flow ECMP), DCTCPSrc
// and TcpSink (an ACK per packet); the ACKs take the reverse of the flow's path through the
// queues (get_bidir_paths with reverse routes), as in aqmlab.
// Prints one JSON line: events, delivered data packets, wall seconds of the event loop, each
// flow's FCT in seconds (null if unfinished) and its path's hop count.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config.h"
#include "dctcp.h"
#include "eventlist.h"
#include "fat_tree_topology.h"
#include "network.h"
#include "tcp.h"

// The sink end of a flow: counts data packets and records when the flow's last byte arrived;
// passes the packet on to the TcpSink (no event).
class Tap : public PacketSink {
  public:
    Tap(EventList& ev, uint64_t last_seq) : _ev(ev), _last(last_seq) {}
    uint64_t packets = 0;
    simtime_picosec done = 0;
    void receivePacket(Packet& pkt) override {
        packets++;
        pkt.sendOn();
    }
    const std::string& nodename() override { return _name; }
    EventList& _ev;
    uint64_t _last;

  private:
    std::string _name = "tap";
};

// Watches a source's acknowledged bytes: the FCT is when the last byte is acknowledged.
class Watch : public EventSource {
  public:
    Watch(EventList& ev, std::vector<TcpSrc*>& srcs, uint64_t bytes, simtime_picosec period)
        : EventSource(ev, "watch"), _srcs(srcs), _bytes(bytes), _period(period),
          fct(srcs.size(), -1.0) {
        ev.sourceIsPendingRel(*this, period);
    }
    void doNextEvent() override {
        bool all = true;
        for (size_t i = 0; i < _srcs.size(); i++) {
            if (fct[i] < 0 && _srcs[i]->_last_acked >= _bytes) {
                fct[i] = timeAsSec(eventlist().now());
            }
            all = all && fct[i] >= 0;
        }
        if (!all) {
            eventlist().sourceIsPendingRel(*this, _period);
        }
    }
    std::vector<TcpSrc*>& _srcs;
    uint64_t _bytes;
    simtime_picosec _period;
    std::vector<double> fct;
};

int main(int argc, char** argv) {
    if (argc != 8) {
        std::fprintf(stderr,
                     "usage: %s K RATE_GBPS BUFFER_PKTS FLOW_BYTES PKT_BYTES DURATION_S SEED\n",
                     argv[0]);
        return 2;
    }
    uint32_t k = std::atoi(argv[1]);
    double rate_gbps = std::atof(argv[2]);
    int buffer = std::atoi(argv[3]);
    uint64_t bytes = std::strtoull(argv[4], nullptr, 10);
    int pkt = std::atoi(argv[5]);
    double duration = std::atof(argv[6]);
    srand(std::atoi(argv[7]));

    EventList eventlist;
    eventlist.setEndtime(timeFromSec(duration));
    Packet::set_packet_size(pkt);
    uint32_t hosts = k * k * k / 4;
    FatTreeTopology top(hosts, speedFromMbps(rate_gbps * 1000.0), memFromPkt(buffer), nullptr,
                        &eventlist, nullptr, ECN, timeFromUs(1.0), 0);
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    // a random cyclic permutation (Sattolo), as aqmlab's
    std::vector<uint32_t> to(hosts);
    for (uint32_t i = 0; i < hosts; i++) to[i] = i;
    for (uint32_t i = hosts - 1; i > 0; i--) {
        uint32_t j = rand() % i;
        std::swap(to[i], to[j]);
    }
    std::vector<TcpSrc*> srcs;
    std::vector<Tap*> taps;
    std::vector<size_t> hops;
    for (uint32_t s = 0; s < hosts; s++) {
        uint32_t d = to[s];
        auto* paths = top.get_bidir_paths(s, d, true);
        const Route* path = paths->at(rand() % paths->size());
        hops.push_back(path->size() / 2);  // a queue and a pipe per hop
        DCTCPSrc* src = new DCTCPSrc(nullptr, nullptr, eventlist);
        src->setName("dctcp" + std::to_string(s));
        // htsim's set_flowsize(n) sends n + one packet (it counts a handshake packet)
        src->set_flowsize(bytes - pkt);
        TcpSink* snk = new TcpSink();
        snk->setName("sink" + std::to_string(s));
        scanner.registerTcp(*src);
        Tap* tap = new Tap(eventlist, bytes);
        Route* out = new Route(*path);
        out->push_back(tap);
        out->push_back(snk);
        Route* in = new Route(*path->reverse());
        in->push_back(src);
        src->connect(*out, *in, *snk, 0);
        srcs.push_back(src);
        taps.push_back(tap);
    }
    Watch watch(eventlist, srcs, bytes, timeFromUs(1.0));

    uint64_t events = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (eventlist.doNextEvent()) {
        events++;
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t delivered = 0;
    for (auto* t : taps) delivered += t->packets;
    std::printf("{\"events\": %llu, \"packets\": %llu, \"wall_seconds\": %.6f, \"fct_s\": [",
                (unsigned long long)events, (unsigned long long)delivered, wall);
    for (size_t i = 0; i < watch.fct.size(); i++) {
        if (watch.fct[i] < 0)
            std::printf("%snull", i ? ", " : "");
        else
            std::printf("%s%.9f", i ? ", " : "", watch.fct[i]);
    }
    std::printf("], \"hops\": [");
    for (size_t i = 0; i < hops.size(); i++) std::printf("%s%zu", i ? ", " : "", hops[i]);
    std::printf("]}\n");
    return 0;
}
