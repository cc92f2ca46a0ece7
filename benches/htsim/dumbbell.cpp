// aqmlab's htsim driver: the dumbbell of benches/bench_htsim.py in htsim (Broadcom/csg-htsim).
//
// Build against a user-provided htsim build (HTSIM_DIR = its sim/ folder, where
// `make libhtsim.a` ran):
//   g++ -O3 -std=c++17 -I$HTSIM_DIR dumbbell.cpp $HTSIM_DIR/libhtsim.a -o htsim_dumbbell
// Run: htsim_dumbbell FLOWS RATE_MBPS RTT_MS BUFFER_PKTS DURATION_S PKT_BYTES SEED
//
// Topology (aqmlab's `access = "none"` dumbbell): every TcpSrc sends straight into one
// drop-tail Queue (the bottleneck, RATE, BUFFER packets), then a Pipe of RTT/2, then a
// counter and its TcpSink; ACKs go through a reverse Queue of the same rate (10000
// packets) and a Pipe of RTT/2 back to the source. htsim's TCP (NewReno-style fast
// recovery, 10-segment initial window); the slow-start threshold starts unlimited as in
// aqmlab; start times uniform in [0, 1 s) as aqmlab's default start jitter.
// Prints one JSON line: events, bottleneck packets (data packets that crossed the
// bottleneck), wall seconds of the event loop.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "tcp.h"

// Counts the data packets that crossed the bottleneck and passes them on (no event).
class Counter : public PacketSink {
  public:
    uint64_t packets = 0;
    void receivePacket(Packet& pkt) override {
        packets++;
        pkt.sendOn();
    }
    const std::string& nodename() override { return _name; }

  private:
    std::string _name = "counter";
};

int main(int argc, char** argv) {
    if (argc != 8) {
        std::fprintf(stderr,
                     "usage: %s FLOWS RATE_MBPS RTT_MS BUFFER_PKTS DURATION_S PKT_BYTES SEED\n",
                     argv[0]);
        return 2;
    }
    int flows = std::atoi(argv[1]);
    double rate_mbps = std::atof(argv[2]);
    double rtt_ms = std::atof(argv[3]);
    int buffer = std::atoi(argv[4]);
    double duration = std::atof(argv[5]);
    int pkt = std::atoi(argv[6]);
    srand(std::atoi(argv[7]));

    EventList eventlist;
    eventlist.setEndtime(timeFromSec(duration));
    Packet::set_packet_size(pkt);
    linkspeed_bps rate = speedFromMbps(rate_mbps);

    Queue bottleneck(rate, memFromPkt(buffer), eventlist, nullptr);
    bottleneck.setName("R1->R2");
    Queue reverse(rate, memFromPkt(10000), eventlist, nullptr);
    reverse.setName("R2->R1");
    Pipe fwd(timeFromUs(rtt_ms * 500.0), eventlist);
    fwd.setName("fwd");
    Pipe back(timeFromUs(rtt_ms * 500.0), eventlist);
    back.setName("back");
    Counter counter;
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    for (int i = 0; i < flows; i++) {
        TcpSrc* src = new TcpSrc(nullptr, nullptr, eventlist);
        src->setName("tcp" + std::to_string(i));
        src->set_ssthresh(0xffffffffu);
        TcpSink* snk = new TcpSink();
        snk->setName("sink" + std::to_string(i));
        scanner.registerTcp(*src);
        route_t* out = new route_t();
        out->push_back(&bottleneck);
        out->push_back(&fwd);
        out->push_back(&counter);
        out->push_back(snk);
        route_t* in = new route_t();
        in->push_back(&reverse);
        in->push_back(&back);
        in->push_back(src);
        src->connect(*out, *in, *snk, (simtime_picosec)(drand() * timeFromSec(1.0)));
    }

    uint64_t events = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (eventlist.doNextEvent()) {
        events++;
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"events\": %llu, \"bottleneck_packets\": %llu, \"wall_seconds\": %.6f}\n",
                (unsigned long long)events, (unsigned long long)counter.packets, wall);
    return 0;
}
