// ns3-dumbbell: aqmlab's dumbbell scenario, rebuilt in ns-3 for cross-checks and benchmarks.
//
//   S_1 ..                                          .. D_1
//   S_i -- access --  R1 ==== bottleneck ==== R2  -- access -- D_i
//   S_N ..            (AQM + buffer on R1->R2)       .. D_N
//
// Modelling choices (see README.md in this directory for the full parameter mapping):
//  * Bottleneck rate C, access links 10 x C. Propagation delay: every access link rtt/8, bottleneck
//    rtt/4, so the two-way propagation delay of every flow is exactly rtt.
//  * ns-3's PointToPointNetDevice puts a 2-byte PPP header on every frame; aqmlab's links
//    serialise bare IP packets. Every device rate is therefore scaled by (S + 2) / S (S = data
//    packet IP size) so that a full-size data packet takes exactly S * 8 / C seconds, as in aqmlab.
//    Byte counts reported below are IP bytes (no PPP header).
//  * The AQM is a traffic-control queue disc on R1's bottleneck device. That device's own transmit
//    queue is set to 1 packet (no BQL), so the backlog builds in the queue disc: at most one packet
//    waits in the device queue while another one is being serialised.
//  * Every other device has no queue disc and a drop-tail device queue of 10000 packets, so only
//    the bottleneck drops.
//  * Routing: ns-3's Ipv4StaticRouting scans its whole route list for every packet (about 7x slower
//    than necessary at 1000 flows). For a fair benchmark every node uses HostRouteRouting below:
//    host routes in an std::unordered_map (O(1) per packet), a default route on hosts, and the
//    strong end-system model for local delivery.
//  * TCP: SACK and timestamps off (40-byte TCP/IP headers, pure ACKs are 40 B), window scaling on,
//    send/receive buffers of 2 x (BDP + buffer) + 64 KiB, initial cwnd 10, min RTO 200 ms with
//    RTO = SRTT + max(4 RTTVAR, 200 ms) as in aqmlab and Linux (ClockGranularity = 200 ms),
//    classic (RFC 6582) fast recovery instead of ns-3's default PRR, limited transmit off,
//    DelAckCount 1 (2 with --delack). CUBIC: ns-3's TcpCubic with HyStart off (RFC 9438 core).
//    --linux instead keeps ns-3's own defaults for these: SACK and timestamps on, PRR recovery,
//    limited transmit, DelAckCount 2, HyStart on (the counterpart of aqmlab's `linux` profile).
//    --cc linuxreno: TcpLinuxReno (per-segment congestion avoidance, as Linux and aqmlab).
//    --cc bbr: TcpBbr (ns-3's BBR v1 after Linux tcp_bbr.c; it turns pacing on itself).
//  * --ecn: ECN on TcpSocketBase (UseEcn On) and on the queue disc (UseEcn): RED, PIE and CoDel
//    mark ECT packets instead of dropping them (PIE only while its probability is <= 10%).
//  * --aqm fq_codel: ns-3's FqCoDelQueueDisc with Linux's sch_fq_codel defaults (1024 flows,
//    quantum 1500 B = one MTU, drop batch 64, target 5 ms, interval 100 ms, ECN on), the limit
//    being the bottleneck buffer (as aqmlab's fq_codel with the link's buffer), and a hash
//    perturbation derived from --seed (Linux draws one at random when the qdisc is created).
//  * --aqm cobalt / fq_cobalt: ns-3's CobaltQueueDisc / FqCobaltQueueDisc with their own
//    defaults (target 5 ms, interval 100 ms, Increment 1/256, Decrement 1/4096, BlueThreshold
//    400 ms; UseEcn off for cobalt, on for fq_cobalt), the limit being the bottleneck buffer;
//    fq_cobalt as fq_codel above (1024 flows, quantum 1500 B, drop batch 64, perturbation).
//  * Long-lived BulkSend flows start at seeded uniform times in [0, 1 s].
//
// Output (--json): one JSON object shaped like aqmlab's summary.json.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#ifndef NS3_PKG_VERSION
#define NS3_PKG_VERSION "unknown"
#endif

using namespace ns3;

// ---------------------------------------------------------------------------------------------
// O(1) routing: host routes in a hash map.
// ---------------------------------------------------------------------------------------------

class HostRouteRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("aqmlab::HostRouteRouting")
                                .SetParent<Ipv4RoutingProtocol>()
                                .SetGroupName("Internet")
                                .AddConstructor<HostRouteRouting>();
        return tid;
    }

    /// Route to the single host `dst` out of `iface` via next hop `gw`.
    void AddHostRoute(Ipv4Address dst, uint32_t iface, Ipv4Address gw)
    {
        m_routes[dst.Get()] = MakeRoute(dst, iface, gw);
    }

    /// Route for every destination without a host route.
    void SetDefaultRoute(uint32_t iface, Ipv4Address gw)
    {
        m_default = MakeRoute(Ipv4Address::GetAny(), iface, gw);
    }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>,
                               const Ipv4Header& header,
                               Ptr<NetDevice>,
                               Socket::SocketErrno& sockerr) override
    {
        Ptr<Ipv4Route> r = Lookup(header.GetDestination());
        sockerr = r ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
        return r;
    }

    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb,
                    MulticastForwardCallback,
                    LocalDeliverCallback lcb,
                    ErrorCallback ecb) override
    {
        const int32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        const Ipv4Address dst = header.GetDestination();
        // Strong end-system model: deliver locally only what is addressed to the receiving
        // interface (every interface here has exactly one address).
        if (iif >= 0 && m_ipv4->GetNAddresses(iif) > 0 && m_ipv4->GetAddress(iif, 0).GetLocal() == dst)
        {
            lcb(p, header, iif);
            return true;
        }
        Ptr<Ipv4Route> r = Lookup(dst);
        if (!r)
        {
            ecb(p, header, Socket::ERROR_NOROUTETOHOST);
            return false;
        }
        ucb(r, p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }

    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
    {
        *stream->GetStream() << "HostRouteRouting: " << m_routes.size() << " host routes"
                             << (m_default ? " + default" : "") << "\n";
    }

  protected:
    void DoDispose() override
    {
        m_routes.clear();
        m_default = nullptr;
        m_ipv4 = nullptr;
        Ipv4RoutingProtocol::DoDispose();
    }

  private:
    Ptr<Ipv4Route> MakeRoute(Ipv4Address dst, uint32_t iface, Ipv4Address gw) const
    {
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetDestination(dst);
        r->SetGateway(gw);
        r->SetOutputDevice(m_ipv4->GetNetDevice(iface));
        r->SetSource(m_ipv4->GetAddress(iface, 0).GetLocal());
        return r;
    }

    Ptr<Ipv4Route> Lookup(Ipv4Address dst) const
    {
        auto it = m_routes.find(dst.Get());
        return it != m_routes.end() ? it->second : m_default;
    }

    Ptr<Ipv4> m_ipv4;
    std::unordered_map<uint32_t, Ptr<Ipv4Route>> m_routes;
    Ptr<Ipv4Route> m_default;
};

class HostRouteRoutingHelper : public Ipv4RoutingHelper
{
  public:
    Ipv4RoutingHelper* Copy() const override { return new HostRouteRoutingHelper(*this); }

    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node>) const override
    {
        return CreateObject<HostRouteRouting>();
    }
};

// ---------------------------------------------------------------------------------------------
// Command line (aqmlab style: `--key value` or `--key=value`).
// ---------------------------------------------------------------------------------------------

struct Options
{
    uint32_t flows = 10;
    uint32_t reverseFlows = 0; // --reverse-flows N: flows from R2's side to R1's
    std::string rate = "10Mbps";
    std::string rtt = "100ms";
    uint32_t buffer = 100;
    std::string aqm = "fifo";
    std::vector<std::string> aqmParams;
    std::string cc = "newreno";
    bool ecn = false;
    bool delack = false;
    uint32_t pktSize = 1000;
    std::string duration = "60s";
    std::string warmup = "10s";
    uint32_t seed = 1;
    bool json = false;
    bool staticRouting = false; // --routing static: ns-3's stock Ipv4StaticRouting (for comparison)
    bool tcpStats = false;      // --tcp-stats: count retransmitted segments (a per-segment trace)
    std::string clockGranularity = "200ms"; // ns-3's G in RTO = SRTT + max(G, 4 RTTVAR)
    bool sack = false; // --sack: SACK on (ns-3's RFC 6675 scoreboard), for experiments
    bool linux = false; // --linux: ns-3's own TCP defaults (SACK, timestamps, PRR, limited transmit)
    std::string qdiscTrace; // --qdisc-trace PATH: per-packet events of the bottleneck queue disc
};

static void
Usage(int code)
{
    std::cerr
        << "usage: ns3-dumbbell [--flows N] [--rate 10Mbps] [--rtt 100ms] [--buffer PKTS]\n"
           "                    [--aqm fifo|red|pie|codel|fq_codel|cobalt|fq_cobalt]\n"
           "                    [--aqm-param key=value ...]\n"
           "                    [--cc newreno|linuxreno|cubic|bbr] [--ecn] [--delack] [--pkt-size BYTES]\n"
           "                    [--duration 60s] [--warmup 10s] [--seed S] [--json]\n"
           "                    [--routing hash|static]  (static: ns-3's linear-scan routing)\n"
           "                    [--tcp-stats]  (also count retransmitted segments per flow)\n"
           "                    [--sack]  (SACK on; off by default, as in aqmlab)\n"
           "                    [--reverse-flows N]  (N flows right to left; the same queue disc\n"
           "                                      on R2's bottleneck device, reported as bottleneck_reverse)\n"
           "                    [--linux]  (ns-3's TCP defaults: SACK, timestamps, PRR, limited\n"
           "                                transmit; beside aqmlab's `linux` profile)\n"
           "                    [--qdisc-trace PATH]  (CSV of the bottleneck queue disc's packet\n"
           "                                      events, warm-up included: time_ns,kind,flow,size,sojourn_ns)\n"
           "                    [--clock-granularity 200ms]  (G in RTO = SRTT + max(G, 4 RTTVAR);\n"
           "                                      200ms = aqmlab's/Linux's rule, 1ms = ns-3's default)\n"
           "aqm-param keys: red: min_th max_th (packets) w_q max_p gentle\n"
           "                pie: target t_update alpha beta max_burst\n"
           "                codel: target interval\n"
           "                fq_codel: target interval flows quantum limit drop_batch_size ecn\n"
           "                          ce_threshold min_bytes (MinBytes of the per-flow CoDels)\n"
           "                cobalt: target interval ecn p_inc p_dec blue_threshold\n"
           "                fq_cobalt: the same and flows quantum limit drop_batch_size\n"
           "times take a unit (15ms, 0.1s); a bare number is read as milliseconds.\n";
    std::exit(code);
}

static Options
ParseArgs(int argc, char** argv)
{
    Options o;
    std::vector<std::string> args(argv + 1, argv + argc);
    for (size_t i = 0; i < args.size(); ++i)
    {
        std::string key = args[i];
        std::string val;
        bool hasInline = false;
        if (key.rfind("--", 0) != 0)
        {
            std::cerr << "unexpected argument: " << key << "\n";
            Usage(2);
        }
        auto eq = key.find('=');
        if (eq != std::string::npos && key.rfind("--aqm-param", 0) != 0)
        {
            val = key.substr(eq + 1);
            key = key.substr(0, eq);
            hasInline = true;
        }
        else if (key.rfind("--aqm-param=", 0) == 0)
        {
            val = key.substr(std::string("--aqm-param=").size());
            key = "--aqm-param";
            hasInline = true;
        }
        auto flag = [&](bool& b) { b = hasInline ? (val == "1" || val == "true") : true; };
        auto next = [&]() -> std::string {
            if (hasInline)
            {
                return val;
            }
            if (i + 1 >= args.size())
            {
                std::cerr << "missing value for " << key << "\n";
                Usage(2);
            }
            return args[++i];
        };
        try
        {
            if (key == "--help" || key == "-h")
                Usage(0);
            else if (key == "--flows")
                o.flows = std::stoul(next());
            else if (key == "--reverse-flows")
                o.reverseFlows = std::stoul(next());
            else if (key == "--rate")
                o.rate = next();
            else if (key == "--rtt")
                o.rtt = next();
            else if (key == "--buffer")
                o.buffer = std::stoul(next());
            else if (key == "--aqm")
                o.aqm = next();
            else if (key == "--aqm-param")
                o.aqmParams.push_back(next());
            else if (key == "--cc")
                o.cc = next();
            else if (key == "--ecn")
                flag(o.ecn);
            else if (key == "--delack")
                flag(o.delack);
            else if (key == "--pkt-size")
                o.pktSize = std::stoul(next());
            else if (key == "--duration")
                o.duration = next();
            else if (key == "--warmup")
                o.warmup = next();
            else if (key == "--seed")
                o.seed = std::stoul(next());
            else if (key == "--json")
                flag(o.json);
            else if (key == "--tcp-stats")
                flag(o.tcpStats);
            else if (key == "--clock-granularity")
                o.clockGranularity = next();
            else if (key == "--sack")
                flag(o.sack);
            else if (key == "--linux")
                flag(o.linux);
            else if (key == "--qdisc-trace")
                o.qdiscTrace = next();
            else if (key == "--routing")
            {
                std::string r = next();
                if (r != "static" && r != "hash")
                {
                    std::cerr << "--routing expects hash|static\n";
                    Usage(2);
                }
                o.staticRouting = (r == "static");
            }
            else
            {
                std::cerr << "unknown option: " << key << "\n";
                Usage(2);
            }
        }
        catch (const std::exception&)
        {
            std::cerr << "bad value for " << key << "\n";
            Usage(2);
        }
    }
    if (o.aqm == "droptail")
        o.aqm = "fifo";
    if (o.flows == 0 || o.buffer == 0 || o.pktSize <= 40 + 1)
    {
        std::cerr << "flows and buffer must be > 0 and pkt-size > 41\n";
        std::exit(2);
    }
    return o;
}

static Time
ParseTime(const std::string& s)
{
    bool bare = !s.empty() && s.find_first_not_of("0123456789.eE+-") == std::string::npos;
    return bare ? MilliSeconds(std::stod(s)) : Time(s);
}

static bool
ParseBool(const std::string& s)
{
    if (s == "1" || s == "true" || s == "True" || s == "on" || s == "yes")
        return true;
    if (s == "0" || s == "false" || s == "False" || s == "off" || s == "no")
        return false;
    std::cerr << "not a boolean: " << s << "\n";
    std::exit(2);
}

// ---------------------------------------------------------------------------------------------
// Measurement state.
// ---------------------------------------------------------------------------------------------

struct Meter
{
    Time warmup;
    Ptr<QueueDisc> qdisc;
    std::vector<double> sojournMs; // per dequeued packet after warm-up
    // The same, without the packets dropped after their dequeue (CoDel's drops, FqCoDel's
    // overflow batch): ns-3 fires a queue disc's Dequeue and SojournTime traces for every packet
    // leaving an internal queue or child queue disc, so sojournMs includes those drops.
    std::vector<double> sentSojournMs;
    const QueueDiscItem* lastDequeued = nullptr;
    double qPktsSum = 0;
    double qBytesSum = 0;
    uint64_t qSamples = 0;
    QueueDisc::Stats statsAtWarmup;
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<uint64_t> rxAtWarmup;
    // Per flow, after warm-up: entries into fast recovery and into loss (RTO) state, RTO expiries
    // (back-offs included) and retransmitted data segments (--tcp-stats only).
    std::vector<uint64_t> recoveries, lossEpisodes, timeouts, retransmits;
    std::vector<uint32_t> highestTxEnd;
    // Drops at the bottleneck queue disc after warm-up, by ns-3's reason string (child queue
    // discs' reasons carry ns-3's "(Dropped by child queue disc) " prefix): packets, and events
    // (a run of drops with the same reason at the same simulated instant counts once, e.g. one
    // FqCoDel overflow batch or one CoDel drop loop).
    std::map<std::string, uint64_t> dropPkts, dropEvents;
    std::string lastDropReason;
    Time lastDropTime = Time(-1);
    // FqCoDel only: backlogged flow queues (holding >= 1 packet), sampled with the queue.
    double activeFlowsSum = 0;
    uint32_t activeFlowsMax = 0;
    // --qdisc-trace: the open file and the flow index of each sender address.
    std::FILE* trace = nullptr;
    std::unordered_map<uint32_t, uint32_t> flowOfSource;
};


static Meter g_meter;

// --reverse-flows: the queue disc on R2's bottleneck device and the reverse flows' sinks.
struct ReverseMeter
{
    Ptr<QueueDisc> qdisc;
    std::vector<double> sojournMs;
    QueueDisc::Stats statsAtWarmup;
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<uint64_t> rxAtWarmup;
};

static ReverseMeter g_reverse;

static void
OnReverseSojourn(Time t)
{
    if (Simulator::Now() >= g_meter.warmup)
        g_reverse.sojournMs.push_back(t.GetSeconds() * 1e3);
}

static void
OnSojourn(Time t)
{
    if (Simulator::Now() >= g_meter.warmup)
        g_meter.sojournMs.push_back(t.GetSeconds() * 1e3);
}

// One line of --qdisc-trace (the whole run, warm-up included): kind is enqueue, dequeue, drop_arrival (dropped
// before enqueue) or drop_dequeue (dropped after enqueue: CoDel, or FqCoDel's overflow batch);
// flow is the sender's index (-1 if unknown), size the IP bytes, sojourn_ns the time since
// enqueue (empty for enqueue and drop_arrival).
static void
TraceItem(const char* kind, Ptr<const QueueDiscItem> item, bool sojourn)
{
    const Time now = Simulator::Now();
    if (!g_meter.trace)
        return;
    long flow = -1;
    if (auto ip = DynamicCast<const Ipv4QueueDiscItem>(item))
    {
        auto it = g_meter.flowOfSource.find(ip->GetHeader().GetSource().Get());
        if (it != g_meter.flowOfSource.end())
            flow = it->second;
    }
    if (sojourn)
        std::fprintf(g_meter.trace, "%lld,%s,%ld,%u,%lld\n", (long long)now.GetNanoSeconds(), kind,
                     flow, item->GetSize(), (long long)(now - item->GetTimeStamp()).GetNanoSeconds());
    else
        std::fprintf(g_meter.trace, "%lld,%s,%ld,%u,\n", (long long)now.GetNanoSeconds(), kind, flow,
                     item->GetSize());
}

static void
TraceEnqueue(Ptr<const QueueDiscItem> item)
{
    TraceItem("enqueue", item, false);
}

static void
TraceDequeue(Ptr<const QueueDiscItem> item)
{
    TraceItem("dequeue", item, true);
}

static void
TraceDropBeforeEnqueue(Ptr<const QueueDiscItem> item, const char*)
{
    TraceItem("drop_arrival", item, false);
}

static void
TraceDropAfterDequeue(Ptr<const QueueDiscItem> item, const char*)
{
    TraceItem("drop_dequeue", item, true);
}

// The Dequeue trace of the bottleneck queue disc; a DropAfterDequeue of the same item, which
// follows at once, takes the sample back (OnQdiscDrop).
static void
OnSentSojourn(Ptr<const QueueDiscItem> item)
{
    g_meter.lastDequeued = nullptr;
    if (Simulator::Now() < g_meter.warmup)
        return;
    g_meter.sentSojournMs.push_back((Simulator::Now() - item->GetTimeStamp()).GetSeconds() * 1e3);
    g_meter.lastDequeued = PeekPointer(item);
}

static void
OnQdiscDrop(Ptr<const QueueDiscItem>, const char* reason)
{
    const Time now = Simulator::Now();
    if (now < g_meter.warmup)
        return;
    const std::string r(reason);
    g_meter.dropPkts[r]++;
    if (now != g_meter.lastDropTime || r != g_meter.lastDropReason)
        g_meter.dropEvents[r]++;
    g_meter.lastDropTime = now;
    g_meter.lastDropReason = r;
}

static void
OnQdiscDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* reason)
{
    if (PeekPointer(item) == g_meter.lastDequeued)
    {
        g_meter.sentSojournMs.pop_back();
        g_meter.lastDequeued = nullptr;
    }
    OnQdiscDrop(item, reason);
}

static void
OnCongState(uint32_t flow, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (Simulator::Now() < g_meter.warmup)
        return;
    if (now == TcpSocketState::CA_RECOVERY)
        g_meter.recoveries[flow]++;
    else if (now == TcpSocketState::CA_LOSS)
        g_meter.lossEpisodes[flow]++;
}

// Every expiry of the retransmission timer doubles the RTO (RFC 6298 5.5; ns-3 caps it at 60 s);
// nothing else doubles it exactly, so a doubling counts one timeout, backed-off ones included.
static void
OnRto(uint32_t flow, Time oldRto, Time newRto)
{
    if (Simulator::Now() >= g_meter.warmup &&
        (newRto == oldRto * 2 || (newRto == Seconds(60) && oldRto >= Seconds(30))))
        g_meter.timeouts[flow]++;
}

static void
OnTcpTx(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
        return;
    const uint32_t end = h.GetSequenceNumber().GetValue() + p->GetSize();
    uint32_t& hi = g_meter.highestTxEnd[flow];
    if (static_cast<int32_t>(end - hi) <= 0)
    {
        if (Simulator::Now() >= g_meter.warmup)
            g_meter.retransmits[flow]++;
    }
    else
    {
        hi = end;
    }
}

static void
HookFlow(Ptr<BulkSendApplication> app, uint32_t flow, bool tcpStats)
{
    Ptr<Socket> sock = app->GetSocket();
    if (!sock)
        return;
    sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, flow));
    sock->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, flow));
    if (tcpStats)
    {
        g_meter.highestTxEnd[flow] = 0;
        sock->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTcpTx, flow));
    }
}

static void
SampleQueue(Time interval, Time end)
{
    g_meter.qPktsSum += g_meter.qdisc->GetNPackets();
    g_meter.qBytesSum += g_meter.qdisc->GetNBytes();
    g_meter.qSamples++;
    if (DynamicCast<FqCoDelQueueDisc>(g_meter.qdisc) ||
        DynamicCast<FqCobaltQueueDisc>(g_meter.qdisc))
    {
        uint32_t active = 0;
        for (std::size_t i = 0; i < g_meter.qdisc->GetNQueueDiscClasses(); ++i)
            active += g_meter.qdisc->GetQueueDiscClass(i)->GetQueueDisc()->GetNPackets() > 0;
        g_meter.activeFlowsSum += active;
        g_meter.activeFlowsMax = std::max(g_meter.activeFlowsMax, active);
    }
    if (Simulator::Now() + interval < end)
        Simulator::Schedule(interval, &SampleQueue, interval, end);
}

static void
SnapshotWarmup()
{
    g_meter.statsAtWarmup = g_meter.qdisc->GetStats();
    g_meter.rxAtWarmup.clear();
    for (auto& s : g_meter.sinks)
        g_meter.rxAtWarmup.push_back(s->GetTotalRx());
    if (g_reverse.qdisc)
    {
        g_reverse.statsAtWarmup = g_reverse.qdisc->GetStats();
        for (auto& s : g_reverse.sinks)
            g_reverse.rxAtWarmup.push_back(s->GetTotalRx());
    }
}

static double
Percentile(std::vector<double>& v, double q)
{
    // Linear interpolation between closest ranks (numpy's default "linear" method).
    if (v.empty())
        return 0.0;
    double pos = q * (v.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, v.size() - 1);
    std::nth_element(v.begin(), v.begin() + lo, v.end());
    double a = v[lo];
    double b = *std::min_element(v.begin() + lo + (hi > lo ? 1 : 0), v.end());
    if (hi == lo)
        b = a;
    return a + (pos - lo) * (b - a);
}

/// Mean and percentiles (ms) of a set of per-packet delays.
struct DelayStats
{
    double mean, p50, p95, p99;
};

/// The mean and the 50th, 95th and 99th percentiles of `v` (reordered by Percentile).
static DelayStats
Summarise(std::vector<double>& v)
{
    double sum = 0;
    for (double x : v)
        sum += x;
    return {v.empty() ? 0.0 : sum / v.size(), Percentile(v, 0.50), Percentile(v, 0.95),
            Percentile(v, 0.99)};
}

// ---------------------------------------------------------------------------------------------
// AQM configuration.
// ---------------------------------------------------------------------------------------------

// SplitMix64 finaliser: the FqCoDel hash perturbation of run --seed (a fixed function of the
// seed, so that it draws nothing from ns-3's random streams and the flows' start times stay
// those of the other AQMs with the same seed).
static uint32_t
Perturbation(uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<uint32_t>(z ^ (z >> 31));
}

// The DRR quantum of a flow-queueing disc (FqCoDel or FqCobalt), before it is initialised.
static void
SetFqQuantum(Ptr<QueueDisc> qd, uint32_t quantum)
{
    if (auto fqc = DynamicCast<FqCoDelQueueDisc>(qd))
        fqc->SetQuantum(quantum);
    else if (auto fqb = DynamicCast<FqCobaltQueueDisc>(qd))
        fqb->SetQuantum(quantum);
}

static TrafficControlHelper
MakeQueueDisc(const Options& o, DataRate rate, Time rtt, uint32_t* fqQuantum)
{
    TrafficControlHelper tch;
    const QueueSizeValue maxSize(QueueSize(std::to_string(o.buffer) + "p"));
    std::map<std::string, std::string> p;
    for (const auto& kv : o.aqmParams)
    {
        auto eq = kv.find('=');
        if (eq == std::string::npos)
        {
            std::cerr << "--aqm-param expects key=value, got " << kv << "\n";
            std::exit(2);
        }
        p[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    auto take = [&](const std::string& k, const std::string& dflt) {
        auto it = p.find(k);
        if (it == p.end())
            return dflt;
        std::string v = it->second;
        p.erase(it);
        return v;
    };

    if (o.aqm == "fifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", maxSize);
    }
    else if (o.aqm == "red")
    {
        // Floyd & Jacobson RED as in ns-2: packet mode (MaxSize in packets), gentle, wait,
        // idle-time correction with MeanPktSize and LinkBandwidth (ns-2's ptc), max_p = 1/LInterm.
        double maxP = std::stod(take("max_p", "0.1"));
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", maxSize,
                             "MinTh", DoubleValue(std::stod(take("min_th", "5"))),
                             "MaxTh", DoubleValue(std::stod(take("max_th", "15"))),
                             "QW", DoubleValue(std::stod(take("w_q", "0.002"))),
                             "LInterm", DoubleValue(1.0 / maxP),
                             "Gentle", BooleanValue(ParseBool(take("gentle", "true"))),
                             "Wait", BooleanValue(true),
                             "ARED", BooleanValue(false),
                             "AdaptMaxP", BooleanValue(false),
                             "MeanPktSize", UintegerValue(o.pktSize),
                             "IdlePktSize", UintegerValue(0),
                             "LinkBandwidth", DataRateValue(rate),
                             "LinkDelay", TimeValue(rtt / 4),
                             "UseHardDrop", BooleanValue(true),
                             "UseEcn", BooleanValue(o.ecn));
    }
    else if (o.aqm == "pie")
    {
        // RFC 8033 defaults, all set explicitly. Queue delay from per-packet timestamps
        // (UseDequeueRateEstimator=false), cap drop adjustment on, derandomization off,
        // no activation threshold.
        tch.SetRootQueueDisc("ns3::PieQueueDisc",
                             "MaxSize", maxSize,
                             "QueueDelayReference", TimeValue(ParseTime(take("target", "15ms"))),
                             "Tupdate", TimeValue(ParseTime(take("t_update", "15ms"))),
                             "A", DoubleValue(std::stod(take("alpha", "0.125"))),
                             "B", DoubleValue(std::stod(take("beta", "1.25"))),
                             "MaxBurstAllowance", TimeValue(ParseTime(take("max_burst", "150ms"))),
                             "MeanPktSize", UintegerValue(o.pktSize),
                             "UseDequeueRateEstimator", BooleanValue(false),
                             "UseCapDropAdjustment", BooleanValue(true),
                             "UseDerandomization", BooleanValue(false),
                             "MarkEcnThreshold", DoubleValue(0.1),
                             "UseEcn", BooleanValue(o.ecn));
    }
    else if (o.aqm == "codel")
    {
        // RFC 8289; MinBytes (the pseudo-code's maxpacket) = one full data packet.
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc",
                             "MaxSize", maxSize,
                             "Target", TimeValue(ParseTime(take("target", "5ms"))),
                             "Interval", TimeValue(ParseTime(take("interval", "100ms"))),
                             "MinBytes", UintegerValue(o.pktSize),
                             "UseEcn", BooleanValue(o.ecn));
    }
    else if (o.aqm == "fq_codel")
    {
        // RFC 8290 with Linux sch_fq_codel defaults (fq_codel_init): 1024 flows, quantum one
        // MTU, drop batch 64, CoDel target 5 ms / interval 100 ms, ECN on, no ce_threshold.
        // The limit is the bottleneck buffer (aqmlab's fq_codel takes the link's buffer; Linux's
        // default is 10240 packets). The per-flow CoDels get MaxSize, Target and Interval from
        // FqCoDel; their MinBytes (no drop while the flow's own backlog is at most this; Linux
        // checks the whole qdisc's backlog against one MTU) is ns-3's default, 1500, unless
        // min_bytes is given.
        const std::string limit = take("limit", std::to_string(o.buffer));
        const std::string minBytes = take("min_bytes", "");
        if (!minBytes.empty())
        {
            // 0 crashes ns-3 3.37's CoDelQueueDisc; 1 already means "only when empty".
            if (std::stoul(minBytes) == 0)
            {
                std::cerr << "--aqm-param min_bytes must be >= 1\n";
                std::exit(2);
            }
            Config::SetDefault("ns3::CoDelQueueDisc::MinBytes",
                               UintegerValue(std::stoul(minBytes)));
        }
        const std::string ce = take("ce_threshold", "");
        // FqCoDel takes its CoDel times as strings: pass them in ns, after our unit rules.
        auto nsText = [](const std::string& t) {
            return std::to_string(ParseTime(t).GetNanoSeconds()) + "ns";
        };
        *fqQuantum = std::stoul(take("quantum", "1500"));
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(limit + "p")),
                             "Flows", UintegerValue(std::stoul(take("flows", "1024"))),
                             "DropBatchSize",
                             UintegerValue(std::stoul(take("drop_batch_size", "64"))),
                             "Target", StringValue(nsText(take("target", "5ms"))),
                             "Interval", StringValue(nsText(take("interval", "100ms"))),
                             "UseEcn", BooleanValue(ParseBool(take("ecn", "true"))),
                             "CeThreshold",
                             TimeValue(ce.empty() ? Time::Max() : ParseTime(ce)),
                             "Perturbation", UintegerValue(Perturbation(o.seed)),
                             "EnableSetAssociativeHash", BooleanValue(false));
    }
    else if (o.aqm == "cobalt" || o.aqm == "fq_cobalt")
    {
        // ns-3's own defaults (CobaltQueueDisc / FqCobaltQueueDisc attributes), set explicitly.
        const bool fq = o.aqm == "fq_cobalt";
        auto nsText = [](const std::string& t) {
            return std::to_string(ParseTime(t).GetNanoSeconds()) + "ns";
        };
        const std::string target = take("target", "5ms");
        const std::string interval = take("interval", "100ms");
        const bool ecn = ParseBool(take("ecn", fq || o.ecn ? "true" : "false"));
        const double pInc = std::stod(take("p_inc", "0.00390625"));
        const double pDec = std::stod(take("p_dec", "0.000244140625"));
        const Time blue = ParseTime(take("blue_threshold", "400ms"));
        if (!fq)
        {
            tch.SetRootQueueDisc("ns3::CobaltQueueDisc",
                                 "MaxSize", maxSize,
                                 "Target", TimeValue(ParseTime(target)),
                                 "Interval", TimeValue(ParseTime(interval)),
                                 "UseEcn", BooleanValue(ecn),
                                 "Increment", DoubleValue(pInc),
                                 "Decrement", DoubleValue(pDec),
                                 "BlueThreshold", TimeValue(blue));
        }
        else
        {
            const std::string limit = take("limit", std::to_string(o.buffer));
            *fqQuantum = std::stoul(take("quantum", "1500"));
            tch.SetRootQueueDisc("ns3::FqCobaltQueueDisc",
                                 "MaxSize", QueueSizeValue(QueueSize(limit + "p")),
                                 "Flows", UintegerValue(std::stoul(take("flows", "1024"))),
                                 "DropBatchSize",
                                 UintegerValue(std::stoul(take("drop_batch_size", "64"))),
                                 "Target", StringValue(nsText(target)),
                                 "Interval", StringValue(nsText(interval)),
                                 "UseEcn", BooleanValue(ecn),
                                 "Increment", DoubleValue(pInc),
                                 "Decrement", DoubleValue(pDec),
                                 "BlueThreshold", TimeValue(blue),
                                 "Perturbation", UintegerValue(Perturbation(o.seed)),
                                 "EnableSetAssociativeHash", BooleanValue(false));
        }
    }
    else
    {
        std::cerr << "unknown --aqm " << o.aqm
                  << " (fifo|red|pie|codel|fq_codel|cobalt|fq_cobalt)\n";
        std::exit(2);
    }
    if (!p.empty())
    {
        std::cerr << "unknown --aqm-param for " << o.aqm << ": " << p.begin()->first << "\n";
        std::exit(2);
    }
    return tch;
}

// ---------------------------------------------------------------------------------------------

int
main(int argc, char** argv)
{
    const Options o = ParseArgs(argc, argv);
    const auto wallStart = std::chrono::steady_clock::now();

    const DataRate rate(o.rate);
    const Time rtt = Time(o.rtt);
    const Time duration = Time(o.duration);
    const Time warmup = Time(o.warmup);
    if (warmup >= duration)
    {
        std::cerr << "warmup must be shorter than duration\n";
        return 2;
    }
    const uint32_t S = o.pktSize;
    const uint32_t mss = S - 40; // 20 B IPv4 + 20 B TCP (no options once established)

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(o.seed);

    // ---- TCP defaults ----
    const double bdpBytes = rate.GetBitRate() * rtt.GetSeconds() / 8.0;
    const uint32_t sockBuf =
        static_cast<uint32_t>(2.0 * (bdpBytes + double(o.buffer) * S)) + 65536;
    // --cc newreno: TcpNewReno, whose congestion avoidance adds MSS^2/cwnd per ACK however many
    // segments the ACK covers (half of RFC 5681's growth with delayed ACKs). --cc linuxreno:
    // TcpLinuxReno, Linux's per-segment count (tcp_cong_avoid_ai: cwnd += 1 per cwnd segments
    // acknowledged), which is what aqmlab's Reno window law does; both use the recovery below.
    TypeId ccType;
    if (o.cc == "cubic")
        ccType = TcpCubic::GetTypeId();
    else if (o.cc == "newreno")
        ccType = TcpNewReno::GetTypeId();
    else if (o.cc == "linuxreno")
        ccType = TcpLinuxReno::GetTypeId();
    else if (o.cc == "bbr")
        ccType = TcpBbr::GetTypeId(); // paces itself (TcpBbr::Init turns pacing on)
    else
    {
        std::cerr << "unknown --cc " << o.cc << " (newreno|linuxreno|cubic|bbr)\n";
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccType));
    // --linux keeps ns-3's own defaults for what aqmlab's `linux` profile turns on: PRR
    // recovery, SACK, timestamps, limited transmit, delayed ACKs (DelAckCount 2), HyStart.
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(o.linux ? TcpPrrRecovery::GetTypeId()
                                           : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(o.linux));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(o.delack || o.linux ? 2 : 1));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    // ns-3: RTO = max(MinRto, SRTT + max(G, 4 RTTVAR)). aqmlab (like Linux) bounds the variance
    // term by the minimum RTO instead: RTO = SRTT + max(4 RTTVAR, min_rto). With G = min_rto the
    // two are identical. (With ns-3's default G = 1 ms, per-ACK RTT samples shrink RTTVAR to
    // almost nothing and a queue that grows by a few packets per RTT fires spurious timeouts.)
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Time(o.clockGranularity)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(o.sack || o.linux));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(o.linux));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(o.linux));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(o.ecn ? "On" : "Off"));

    // ---- topology ----
    NodeContainer senders, receivers, routers, rsenders, rreceivers;
    senders.Create(o.flows);
    receivers.Create(o.flows);
    rsenders.Create(o.reverseFlows);   // at R2
    rreceivers.Create(o.reverseFlows); // at R1
    routers.Create(2);
    Ptr<Node> r1 = routers.Get(0);
    Ptr<Node> r2 = routers.Get(1);

    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    HostRouteRoutingHelper routing;
    Ipv4StaticRoutingHelper staticHelper;
    if (o.staticRouting)
        stack.SetRoutingHelper(staticHelper);
    else
        stack.SetRoutingHelper(routing);
    stack.InstallAll();

    // Device rates carry the 2-byte PPP header: scale so an S-byte IP packet takes S*8/C.
    const double pppScale = double(S + 2) / double(S);
    const DataRate bnRate(static_cast<uint64_t>(std::llround(rate.GetBitRate() * pppScale)));
    const DataRate accRate(static_cast<uint64_t>(std::llround(10.0 * rate.GetBitRate() * pppScale)));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(accRate));
    access.SetChannelAttribute("Delay", TimeValue(rtt / 8));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("10000p")));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(bnRate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(rtt / 4));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("10000p")));

    // Addresses: one /30 per link, assigned by hand (no address helper, so no default queue disc
    // is installed on any device).
    uint32_t linkIndex = 0;
    const Ipv4Mask mask("255.255.255.252");
    auto attach = [&](Ptr<Node> n, Ptr<NetDevice> dev, Ipv4Address a) {
        Ptr<Ipv4> ip = n->GetObject<Ipv4>();
        int32_t iface = ip->AddInterface(dev);
        ip->AddAddress(iface, Ipv4InterfaceAddress(a, mask));
        ip->SetUp(iface);
        return static_cast<uint32_t>(iface);
    };
    struct Link
    {
        uint32_t ifA, ifB;
        Ipv4Address a, b;
    };
    auto connect = [&](PointToPointHelper& h, Ptr<Node> na, Ptr<Node> nb, NetDeviceContainer* out) {
        NetDeviceContainer d = h.Install(na, nb);
        const uint32_t base = (10u << 24) + 4u * linkIndex++;
        Link l;
        l.a = Ipv4Address(base + 1);
        l.b = Ipv4Address(base + 2);
        l.ifA = attach(na, d.Get(0), l.a);
        l.ifB = attach(nb, d.Get(1), l.b);
        if (out)
            *out = d;
        return l;
    };

    NetDeviceContainer bnDevs;
    const Link bn = connect(bottleneck, r1, r2, &bnDevs);
    // The bottleneck device's own queue holds 1 packet: the backlog builds in the queue disc.
    DynamicCast<PointToPointNetDevice>(bnDevs.Get(0))->GetQueue()->SetMaxSize(QueueSize("1p"));

    // Routes: hosts send everything to their router; routers hold one host route per host.
    auto hostRoute = [&](Ptr<Node> n, Ipv4Address dst, uint32_t iface, Ipv4Address gw) {
        Ptr<Ipv4RoutingProtocol> rp = n->GetObject<Ipv4>()->GetRoutingProtocol();
        if (o.staticRouting)
            DynamicCast<Ipv4StaticRouting>(rp)->AddHostRouteTo(dst, gw, iface);
        else
            DynamicCast<HostRouteRouting>(rp)->AddHostRoute(dst, iface, gw);
    };
    auto defaultRoute = [&](Ptr<Node> n, uint32_t iface, Ipv4Address gw) {
        Ptr<Ipv4RoutingProtocol> rp = n->GetObject<Ipv4>()->GetRoutingProtocol();
        if (o.staticRouting)
            DynamicCast<Ipv4StaticRouting>(rp)->SetDefaultRoute(gw, iface);
        else
            DynamicCast<HostRouteRouting>(rp)->SetDefaultRoute(iface, gw);
    };
    std::vector<Ipv4Address> dstAddr(o.flows);
    for (uint32_t i = 0; i < o.flows; ++i)
    {
        Ptr<Node> s = senders.Get(i);
        Ptr<Node> d = receivers.Get(i);
        Link ls = connect(access, s, r1, nullptr); // a = sender, b = R1
        Link ld = connect(access, r2, d, nullptr); // a = R2, b = receiver
        defaultRoute(s, ls.ifA, ls.b);
        defaultRoute(d, ld.ifB, ld.a);
        hostRoute(r1, ls.a, ls.ifB, ls.a);
        hostRoute(r1, ld.b, bn.ifA, bn.b);
        hostRoute(r2, ld.b, ld.ifA, ld.b);
        hostRoute(r2, ls.a, bn.ifB, bn.a);
        dstAddr[i] = ld.b;
        g_meter.flowOfSource[ls.a.Get()] = i;
    }
    std::vector<Ipv4Address> rdstAddr(o.reverseFlows);
    for (uint32_t i = 0; i < o.reverseFlows; ++i)
    {
        Ptr<Node> s = rsenders.Get(i);
        Ptr<Node> d = rreceivers.Get(i);
        Link ls = connect(access, s, r2, nullptr); // a = sender, b = R2
        Link ld = connect(access, r1, d, nullptr); // a = R1, b = receiver
        defaultRoute(s, ls.ifA, ls.b);
        defaultRoute(d, ld.ifB, ld.a);
        hostRoute(r2, ls.a, ls.ifB, ls.a);
        hostRoute(r2, ld.b, bn.ifB, bn.a);
        hostRoute(r1, ld.b, ld.ifA, ld.b);
        hostRoute(r1, ls.a, bn.ifA, bn.b);
        rdstAddr[i] = ld.b;
    }
    if (o.reverseFlows > 0)
    {
        // the same queue disc on R2 -> R1, the device's own queue 1 packet (as R1's)
        DynamicCast<PointToPointNetDevice>(bnDevs.Get(1))->GetQueue()->SetMaxSize(QueueSize("1p"));
        uint32_t q = 0;
        TrafficControlHelper rtch = MakeQueueDisc(o, rate, rtt, &q);
        g_reverse.qdisc = rtch.Install(bnDevs.Get(1)).Get(0);
        if (q)
            SetFqQuantum(g_reverse.qdisc, q);
        g_reverse.qdisc->TraceConnectWithoutContext("SojournTime", MakeCallback(&OnReverseSojourn));
    }

    // ---- AQM on R1 -> R2 ----
    uint32_t fqQuantum = 0;
    TrafficControlHelper tch = MakeQueueDisc(o, rate, rtt, &fqQuantum);
    QueueDiscContainer qdiscs = tch.Install(bnDevs.Get(0));
    g_meter.qdisc = qdiscs.Get(0);
    if (fqQuantum)
    {
        // Before the queue disc is initialised (at the start of the run); ns-3 would otherwise
        // take the device's MTU (1500 here too).
        SetFqQuantum(g_meter.qdisc, fqQuantum);
    }
    g_meter.warmup = warmup;
    g_meter.qdisc->TraceConnectWithoutContext("SojournTime", MakeCallback(&OnSojourn));
    g_meter.qdisc->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnQdiscDrop));
    g_meter.qdisc->TraceConnectWithoutContext("DropAfterDequeue",
                                              MakeCallback(&OnQdiscDropAfterDequeue));
    g_meter.qdisc->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnSentSojourn));
    if (!o.qdiscTrace.empty())
    {
        g_meter.trace = std::fopen(o.qdiscTrace.c_str(), "w");
        if (!g_meter.trace)
        {
            std::cerr << "--qdisc-trace: cannot write " << o.qdiscTrace << "\n";
            return 2;
        }
        std::fputs("time_ns,kind,flow,size,sojourn_ns\n", g_meter.trace);
        g_meter.qdisc->TraceConnectWithoutContext("Enqueue", MakeCallback(&TraceEnqueue));
        g_meter.qdisc->TraceConnectWithoutContext("Dequeue", MakeCallback(&TraceDequeue));
        g_meter.qdisc->TraceConnectWithoutContext("DropBeforeEnqueue",
                                                  MakeCallback(&TraceDropBeforeEnqueue));
        g_meter.qdisc->TraceConnectWithoutContext("DropAfterDequeue",
                                                  MakeCallback(&TraceDropAfterDequeue));
    }

    // ---- applications ----
    const uint16_t port = 5000;
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetAttribute("Min", DoubleValue(0.0));
    startRv->SetAttribute("Max", DoubleValue(1.0));
    // BulkSend hands data to TCP in large chunks (payloads are virtual, so this costs no memory).
    g_meter.recoveries.assign(o.flows, 0);
    g_meter.timeouts.assign(o.flows, 0);
    g_meter.lossEpisodes.assign(o.flows, 0);
    g_meter.retransmits.assign(o.flows, 0);
    g_meter.highestTxEnd.assign(o.flows, 0);
    const uint32_t sendSize = std::max(mss, std::min<uint32_t>(sockBuf / 16, 1u << 20) / mss * mss);
    for (uint32_t i = 0; i < o.flows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        g_meter.sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dstAddr[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer ba = bulk.Install(senders.Get(i));
        const Time start = Seconds(startRv->GetValue());
        ba.Start(start);
        // The socket exists once the application has started.
        Simulator::Schedule(start + NanoSeconds(1), &HookFlow,
                            DynamicCast<BulkSendApplication>(ba.Get(0)), i, o.tcpStats);
    }

    for (uint32_t i = 0; i < o.reverseFlows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(rreceivers.Get(i));
        sa.Start(Seconds(0));
        g_reverse.sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(rdstAddr[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer ba = bulk.Install(rsenders.Get(i));
        ba.Start(Seconds(startRv->GetValue()));
    }

    // ---- measurement ----
    const Time sampleInterval = MilliSeconds(10);
    Simulator::Schedule(warmup, &SnapshotWarmup);
    Simulator::Schedule(warmup, &SampleQueue, sampleInterval, duration);
    Simulator::Stop(duration);

    const auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto runEnd = std::chrono::steady_clock::now();

    const double measured = (duration - warmup).GetSeconds();
    const QueueDisc::Stats end = g_meter.qdisc->GetStats();
    const QueueDisc::Stats& w = g_meter.statsAtWarmup;
    const uint64_t arrivals = end.nTotalReceivedPackets - w.nTotalReceivedPackets;
    const uint64_t drops = end.nTotalDroppedPackets - w.nTotalDroppedPackets;
    const uint64_t marks = end.nTotalMarkedPackets - w.nTotalMarkedPackets;
    const uint64_t enqueued = end.nTotalEnqueuedPackets - w.nTotalEnqueuedPackets;
    const uint64_t sentBytes = end.nTotalSentBytes - w.nTotalSentBytes;
    const uint64_t sentPkts = end.nTotalSentPackets - w.nTotalSentPackets;
    const double utilization = sentBytes * 8.0 / (rate.GetBitRate() * measured);

    std::vector<double> goodput(o.flows);
    double sum = 0, sumSq = 0;
    for (uint32_t i = 0; i < o.flows; ++i)
    {
        goodput[i] = (g_meter.sinks[i]->GetTotalRx() - g_meter.rxAtWarmup[i]) * 8.0 / measured;
        sum += goodput[i];
        sumSq += goodput[i] * goodput[i];
    }
    const double jain = sumSq > 0 ? sum * sum / (o.flows * sumSq) : 0.0;

    const DelayStats all = Summarise(g_meter.sojournMs);
    // --reverse-flows: the reverse queue disc's utilization and sojourns, the reverse goodputs
    double revUtil = 0, revGoodput = 0;
    DelayStats revDelay{};
    if (g_reverse.qdisc)
    {
        const QueueDisc::Stats re = g_reverse.qdisc->GetStats();
        revUtil = (re.nTotalSentBytes - g_reverse.statsAtWarmup.nTotalSentBytes) * 8.0 /
                  (rate.GetBitRate() * measured);
        revDelay = Summarise(g_reverse.sojournMs);
        for (uint32_t i = 0; i < o.reverseFlows; ++i)
            revGoodput +=
                (g_reverse.sinks[i]->GetTotalRx() - g_reverse.rxAtWarmup[i]) * 8.0 / measured;
    }
    const DelayStats sentOnly = Summarise(g_meter.sentSojournMs);
    const double meanQ = g_meter.qSamples ? g_meter.qPktsSum / g_meter.qSamples : 0.0;
    const double meanQB = g_meter.qSamples ? g_meter.qBytesSum / g_meter.qSamples : 0.0;

    const uint64_t events = Simulator::GetEventCount();
    const double runWall = std::chrono::duration<double>(runEnd - runStart).count();
    const double totalWall = std::chrono::duration<double>(runEnd - wallStart).count();
    Simulator::Destroy();
    if (g_meter.trace)
        std::fclose(g_meter.trace);

    char buf[256];
    auto num = [&](double v) {
        std::snprintf(buf, sizeof buf, "%.9g", std::isfinite(v) ? v : 0.0);
        return std::string(buf);
    };
    auto delayJson = [&](const DelayStats& d) {
        return "{\"mean\": " + num(d.mean) + ", \"p50\": " + num(d.p50) + ", \"p95\": " +
               num(d.p95) + ", \"p99\": " + num(d.p99) + "}";
    };
    std::ostringstream js;
    js << "{\"scenario\": \"ns3-dumbbell\", \"simulator\": \"ns-3 " << NS3_PKG_VERSION << "\""
       << ", \"clock_granularity_s\": " << Time(o.clockGranularity).GetSeconds()
       << ", \"seed\": " << o.seed << ", \"sim_seconds\": " << num(duration.GetSeconds())
       << ", \"warmup_s\": " << num(warmup.GetSeconds())
       << ", \"wall_seconds\": " << num(runWall) << ", \"wall_seconds_total\": " << num(totalWall)
       << ", \"events\": " << events << ", \"packets_forwarded\": " << end.nTotalSentPackets
       << ", \"links\": {\"bottleneck\": {\"aqm\": \"" << o.aqm << "\""
       << ", \"utilization\": " << num(utilization) << ", \"mean_queue_pkts\": " << num(meanQ)
       << ", \"mean_queue_bytes\": " << num(meanQB) << ", \"queue_delay_ms\": " << delayJson(all)
       << ", \"queue_delay_sent_ms\": " << delayJson(sentOnly) << ", \"arrivals\": " << arrivals
       << ", \"drops\": " << drops
       << ", \"marks\": " << marks << ", \"enqueued\": " << enqueued
       << ", \"packets_sent\": " << sentPkts << ", \"drop_reasons\": {";
    {
        bool first = true;
        for (const auto& [reason, n] : g_meter.dropPkts)
        {
            js << (first ? "" : ", ") << "\"" << reason << "\": {\"packets\": " << n
               << ", \"events\": " << g_meter.dropEvents[reason] << "}";
            first = false;
        }
    }
    js << "}";
    if (o.aqm == "fq_codel" || o.aqm == "fq_cobalt")
        js << ", \"active_flows\": {\"mean\": "
           << num(g_meter.qSamples ? g_meter.activeFlowsSum / g_meter.qSamples : 0.0)
           << ", \"max\": " << g_meter.activeFlowsMax << "}";
    js << "}";
    if (g_reverse.qdisc)
        js << ", \"bottleneck_reverse\": {\"aqm\": \"" << o.aqm << "\", \"utilization\": "
           << num(revUtil) << ", \"queue_delay_ms\": " << delayJson(revDelay)
           << ", \"goodput_bps\": " << num(revGoodput) << "}";
    js << "}, \"flows\": [";
    for (uint32_t i = 0; i < o.flows; ++i)
    {
        js << (i ? ", " : "") << "{\"id\": " << i << ", \"kind\": \"tcp\", \"cc\": \"" << o.cc
           << "\", \"goodput_bps\": " << num(goodput[i])
           << ", \"fast_recoveries\": " << g_meter.recoveries[i]
           << ", \"timeouts\": " << g_meter.timeouts[i]
           << ", \"loss_episodes\": " << g_meter.lossEpisodes[i];
        if (o.tcpStats)
            js << ", \"retransmits\": " << g_meter.retransmits[i];
        js << "}";
    }
    js << "], \"fairness\": {\"jain\": " << num(jain) << "}}";

    if (o.json)
    {
        std::cout << js.str() << std::endl;
    }
    else
    {
        std::printf("ns3-dumbbell (ns-3 %s): %u flows, %s, rtt %s, buffer %u, aqm %s, cc %s\n",
                    NS3_PKG_VERSION, o.flows, o.rate.c_str(), o.rtt.c_str(), o.buffer,
                    o.aqm.c_str(), o.cc.c_str());
        std::printf("  utilization %.4f  mean queue %.2f pkts  delay mean %.2f p50 %.2f p95 %.2f "
                    "p99 %.2f ms\n",
                    utilization, meanQ, all.mean, all.p50, all.p95, all.p99);
        std::printf("  arrivals %llu drops %llu marks %llu enqueued %llu  jain %.4f\n",
                    (unsigned long long)arrivals, (unsigned long long)drops,
                    (unsigned long long)marks, (unsigned long long)enqueued, jain);
        if (g_reverse.qdisc)
            std::printf("  reverse: utilization %.4f  delay mean %.2f p99 %.2f ms  goodput %.3f "
                        "Mb/s\n",
                        revUtil, revDelay.mean, revDelay.p99, revGoodput / 1e6);
        std::printf("  events %llu  packets over bottleneck %u  wall %.2f s (run) %.2f s (total)\n",
                    (unsigned long long)events, end.nTotalSentPackets, runWall, totalWall);
    }
    return 0;
}
