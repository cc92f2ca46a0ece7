# aqmlab's dumbbell in ns-2.35: `ns dumbbell.tcl CONFIG.tcl`.
#
# CONFIG.tcl (written by python/aqmlab/repro/ns2.py from an aqmlab scenario) sets the array `cfg`
# and the list `groups`; README.md describes every key. The topology is aqmlab's dumbbell
# (crates/netsim/SCHEMA.md): one sender S_i and one receiver D_i per flow,
#
#   S_i -- access (rtt/8 + extra_i) -- R1 == bottleneck (rtt/4, AQM on R1->R2) == R2 -- access (rtt/8) -- D_i
#
# so every flow's two-way propagation delay is rtt + 2 extra_i. The last line printed on stdout is
# one JSON object with the measurements (README.md, "Measurements").

if {$argc != 1} {
    puts stderr "usage: ns dumbbell.tcl CONFIG.tcl"
    exit 2
}
source [lindex $argv 0]

set ns [new Simulator]
# Routes are set by hand (`manual_routes` below): every path of the dumbbell is unique, so they
# are the routes ns-2's default static routing would compute, without its all-pairs computation
# over every node (RouteLogic::compute_routes, cubic in the nodes: 150 s of set-up at 1000 flows,
# 2002 nodes). What is simulated is the same (README.md, "How long").
$ns rtproto Manual
# ns-2's RNG: seed 0 would mean "from the clock"; the config always gives a positive seed
global defaultRNG
$defaultRNG seed $cfg(seed)
set rng [new RNG]
$rng seed [expr {$cfg(seed) * 7919 + 17}]

# --- TCP defaults shared by every agent (README.md, "TCP") ----------------------------------------
Agent/TCP set packetSize_ [expr {$cfg(pkt_size) - 40}]
Agent/TCP set window_ 100000
Agent/TCP set windowInit_ $cfg(init_cwnd)
Agent/TCP set maxcwnd_ 0
Agent/TCP set minrto_ 0.2
Agent/TCP set tcpTick_ 0.001
Agent/TCP set overhead_ 0
Agent/TCP set timestamps_ false
Agent/TCPSink set ts_echo_rfc1323_ false

# --- nodes and links -----------------------------------------------------------------------------
set r1 [$ns node]
set r2 [$ns node]
set rate $cfg(rate_bps)
set access $cfg(access_bps)
set q_access 100000

switch -- $cfg(aqm) {
    red     { set qtype RED }
    pi      { set qtype PI }
    rem     { set qtype REM }
    avq     { set qtype Vq }
    default { set qtype DropTail }
}
$ns simplex-link $r1 $r2 $rate [expr {$cfg(rtt) / 4.0}] $qtype
$ns simplex-link $r2 $r1 $rate [expr {$cfg(rtt) / 4.0}] DropTail
$ns queue-limit $r1 $r2 $cfg(buffer)
$ns queue-limit $r2 $r1 $q_access
set bq [[$ns link $r1 $r2] queue]

# --- the bottleneck AQM --------------------------------------------------------------------------
proc setp {obj key} {
    global cfg
    if {[info exists cfg(aqm.$key)]} { $obj set ${key}_ $cfg(aqm.$key) }
}
switch -- $cfg(aqm) {
    red {
        # Floyd's RED in packets: thresholds, q_weight_, linterm_ = 1/max_p, gentle_, wait_
        $bq set thresh_ $cfg(aqm.min_th)
        $bq set maxthresh_ $cfg(aqm.max_th)
        $bq set q_weight_ $cfg(aqm.w_q)
        $bq set linterm_ [expr {1.0 / $cfg(aqm.max_p)}]
        $bq set gentle_ $cfg(aqm.gentle)
        $bq set wait_ $cfg(aqm.wait)
        $bq set setbit_ $cfg(ecn)
        $bq set use_mark_p_ $cfg(aqm.use_mark_p)
        $bq set mark_p_ $cfg(aqm.mark_p)
        $bq set mean_pktsize_ $cfg(aqm.mean_pkt_size)
        $bq set bytes_ false
        $bq set queue_in_bytes_ false
        $bq set drop_tail_ true
        $bq set adaptive_ 0
        # idle-time correction of the average: ns-2 needs the link's packet time
        $bq link [[$ns link $r1 $r2] set link_]
    }
    pi {
        # Hollot's PI, p += a (q - qref) - b (q_old - qref) every 1/w_ s
        $bq set a_ $cfg(aqm.a)
        $bq set b_ $cfg(aqm.b)
        $bq set w_ $cfg(aqm.w)
        $bq set qref_ $cfg(aqm.q_ref)
        $bq set setbit_ $cfg(ecn)
        $bq set mean_pktsize_ $cfg(pkt_size)
        $bq set bytes_ false
        $bq set queue_in_bytes_ false
    }
    avq {
        # Kunniyur & Srikant's AVQ: virtual capacity towards gamma_ x C; mark instead of drop
        $bq set gamma_ $cfg(aqm.gamma)
        $bq set markpkts_ $cfg(ecn)
        $bq set mean_pktsize_ $cfg(pkt_size)
        $bq set queue_in_bytes_ false
        $bq set buflim_ 1.0
        $bq link [[$ns link $r1 $r2] set link_]
    }
    rem {
        foreach k {gamma phi inw pupdtime pbo} { setp $bq $k }
        $bq set markpkts_ $cfg(ecn)
        $bq set mean_pktsize_ $cfg(pkt_size)
    }
}

# A law driven from Tcl (pdlq, sfc): a drop-tail queue and, at the head of the link (before the
# queue), an ErrorModel that marks (markecn_) each arriving packet with probability rate_. Every
# period the law reads the queue monitor (queue length, arrivals) and sets rate_.
set marker ""
if {$cfg(aqm) == "pdlq" || $cfg(aqm) == "sfc"} {
    set marker [new ErrorModel]
    $marker unit pkt
    $marker set rate_ 0.0
    $marker ranvar [new RandomVariable/Uniform]
    $marker set markecn_ $cfg(ecn)
    $marker drop-target [new Agent/Null]
    $ns lossmodel $marker $r1 $r2
}

set qmon [$ns monitor-queue $r1 $r2 [open /dev/null w] 0.01]

# --- flows ---------------------------------------------------------------------------------------
set tcps {}
set sinks {}
set nflow 0
set hosts {}
proc host_pair {extra} {
    global ns r1 r2 access cfg q_access hosts
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 $access [expr {$cfg(rtt) / 8.0 + $extra}] DropTail
    $ns duplex-link $r2 $d $access [expr {$cfg(rtt) / 8.0}] DropTail
    $ns queue-limit $s $r1 $q_access
    $ns queue-limit $r1 $s $q_access
    $ns queue-limit $r2 $d $q_access
    $ns queue-limit $d $r2 $q_access
    lappend hosts [list $s $d]
    return [list $s $d]
}
proc new_tcp {cc ecn delack} {
    switch -- $cc {
        reno    { set t [new Agent/TCP/Reno] }
        sack    { set t [new Agent/TCP/Sack1] }
        default { set t [new Agent/TCP/Newreno] }
    }
    $t set ecn_ $ecn
    if {$cc == "sack"} {
        if {$delack} { set k [new Agent/TCPSink/Sack1/DelAck] } else { set k [new Agent/TCPSink/Sack1] }
    } else {
        if {$delack} { set k [new Agent/TCPSink/DelAck] } else { set k [new Agent/TCPSink] }
    }
    return [list $t $k]
}

set shorts {}
foreach g $groups {
    array unset G
    array set G $g
    if {$G(kind) == "tcp_short"} {
        lappend shorts $g
        continue
    }
    for {set i 0} {$i < $G(count)} {incr i} {
        set extra [lindex $G(extra_delay) [expr {min($i, [llength $G(extra_delay)] - 1)}]]
        if {$extra == ""} { set extra 0.0 }
        lassign [host_pair $extra] s d
        lassign [new_tcp $G(cc) $G(ecn) $G(delack)] tcp sink
        $tcp set fid_ $nflow
        $ns attach-agent $s $tcp
        $ns attach-agent $d $sink
        $ns connect $tcp $sink
        set ftp [new Application/FTP]
        $ftp attach-agent $tcp
        set t0 [expr {$G(start) + $G(start_jitter) * [$rng uniform 0 1]}]
        $ns at $t0 "$ftp start"
        if {$G(stop) > 0} { $ns at $G(stop) "$ftp stop" }
        lappend tcps $tcp
        lappend sinks $sink
        incr nflow
    }
}

# With cfg(cwnd_trace) set (a file name), every cfg(cwnd_interval) s the congestion window of each
# long-lived flow (`cwnd_`, segments) is written to that file, one line "t w_1 w_2 ..."
# (validation/ns2/lawtrace.py).
if {[info exists cfg(cwnd_trace)]} {
    set cwnd_fh [open $cfg(cwnd_trace) w]
    proc cwnd_sample {} {
        global ns tcps cwnd_fh cfg
        set line [$ns now]
        foreach t $tcps { append line " " [$t set cwnd_] }
        puts $cwnd_fh $line
        $ns at [expr {[$ns now] + $cfg(cwnd_interval)}] "cwnd_sample"
    }
    $ns at $cfg(cwnd_interval) "cwnd_sample"
}

# Short flows (aqmlab's tcp_short): Poisson arrivals, sizes ceil(Pareto(mean, shape)) bytes, each
# a new NewReno agent pair on a pool of host pairs at the dumbbell's RTT; a flow sends
# ceil(size / MSS) segments (aqmlab counts segments of MSS = packet size - 40 bytes).
set pool {}
foreach g $shorts {
    array unset G
    array set G $g
    set hp {}
    for {set i 0} {$i < $cfg(short_pool)} {incr i} { lappend hp [host_pair 0.0] }
    lappend pool [list $g $hp]
}
set short_started 0
proc short_arrival {gi} {
    global ns pool rng cfg short_started
    lassign [lindex $pool $gi] g hp
    array set G $g
    set now [$ns now]
    if {$G(stop) > 0 && $now >= $G(stop)} { return }
    # Pareto(mean, shape): scale xm = mean (shape - 1) / shape
    set xm [expr {$G(mean_size) * ($G(pareto_shape) - 1.0) / $G(pareto_shape)}]
    set u [$rng uniform 0 1]
    set size [expr {ceil($xm / pow(1.0 - $u, 1.0 / $G(pareto_shape)))}]
    set segs [expr {int(ceil($size / ($cfg(pkt_size) - 40.0)))}]
    lassign [lindex $hp [expr {$short_started % [llength $hp]}]] s d
    lassign [new_tcp $G(cc) $G(ecn) $G(delack)] tcp sink
    $ns attach-agent $s $tcp
    $ns attach-agent $d $sink
    $ns connect $tcp $sink
    $tcp advanceby $segs
    incr short_started
    set next [expr {$now + [$rng exponential [expr {1.0 / $G(arrival_rate)}]]}]
    $ns at $next "short_arrival $gi"
}
for {set gi 0} {$gi < [llength $pool]} {incr gi} {
    lassign [lindex $pool $gi] g hp
    array set G $g
    $ns at [expr {$G(start) + [$rng exponential [expr {1.0 / $G(arrival_rate)}]]}] "short_arrival $gi"
}

# --- laws driven from Tcl ------------------------------------------------------------------------
set last_arr 0
# With cfg(law_trace) set (a file name), every run of a law appends "t q r p" to that file: the
# time, the queue and the arrival rate it read (packets, packets/s over the last period) and the
# probability it set (validation/ns2/lawtrace.py).
set law_fh ""
if {[info exists cfg(law_trace)]} { set law_fh [open $cfg(law_trace) w] }
proc law_log {q r p} {
    global ns law_fh
    if {$law_fh != ""} { puts $law_fh "[$ns now] $q $r $p" }
}
# PD-LQ (Kim, Tang & Low 2003, eq. 3 with the filter of docs/aqm/pdlq.md): every T_s,
# bhat += T_s P1 (b_prev - bhat); z2 = P1 (b - bhat); z3 = P1 ((r - c) - z2);
# p = p* + H1 (bhat - q_ref) + H2 z2 + H3 z3, clamped to [0, 1]. The memory law adds
# sum_j w_j . dp(k - j) over the past tau / T_s corrections (weights from aqmlab's design).
set pd(bhat) 0.0
set pd(bprev) 0.0
set pd(past) {}
proc pdlq_tick {} {
    global ns cfg pd qmon marker last_arr
    set ts $cfg(aqm.t_update)
    set b [$qmon set pkts_]
    set arr [$qmon set parrivals_]
    set r [expr {($arr - $last_arr) / $ts}]
    set last_arr $arr
    set p1 $cfg(aqm.p1)
    set pd(bhat) [expr {$pd(bhat) + $ts * $p1 * ($pd(bprev) - $pd(bhat))}]
    set z2 [expr {$p1 * ($b - $pd(bhat))}]
    set z3 [expr {$p1 * (($r - $cfg(aqm.capacity)) - $z2)}]
    set x0 [expr {$pd(bhat) - $cfg(aqm.q_ref)}]
    set x1 $z2
    set x2 $z3
    if {[info exists cfg(aqm.weights)]} {
        set j 0
        foreach dp $pd(past) {
            lassign [lindex $cfg(aqm.weights) $j] w0 w1 w2
            set x0 [expr {$x0 + $w0 * $dp}]
            set x1 [expr {$x1 + $w1 * $dp}]
            set x2 [expr {$x2 + $w2 * $dp}]
            incr j
        }
    }
    set dp [expr {$cfg(aqm.h1) * $x0 + $cfg(aqm.h2) * $x1 + $cfg(aqm.h3) * $x2}]
    set p [expr {min(1.0, max(0.0, $cfg(aqm.p_offset) + $dp))}]
    if {[info exists cfg(aqm.weights)]} {
        set pd(past) [lrange [linsert $pd(past) 0 [expr {$p - $cfg(aqm.p_offset)}]] 0 [expr {[llength $cfg(aqm.weights)] - 1}]]
    }
    set pd(bprev) $b
    $marker set rate_ $p
    law_log $b $r $p
    $ns at [expr {[$ns now] + $ts}] "pdlq_tick"
}
# SFC (Gao & Hou, Fig. 5): p = p0 + k1 (q - q_ref) + k2 (R - C) / C, clamped to [0, 1]; R is an
# EWMA (weight rate_weight) of the arrival rate over windows of rate_window s. aqmlab updates p
# at every arrival with the queue it sees; here p is updated once per rate window.
set sfc_rate -1
proc sfc_tick {} {
    global ns cfg qmon marker last_arr sfc_rate
    set ts $cfg(aqm.rate_window)
    set arr [$qmon set parrivals_]
    set r [expr {($arr - $last_arr) / $ts}]
    set last_arr $arr
    if {$sfc_rate < 0} { set sfc_rate $r } else {
        set sfc_rate [expr {$sfc_rate + $cfg(aqm.rate_weight) * ($r - $sfc_rate)}]
    }
    set c $cfg(aqm.capacity)
    set q [$qmon set pkts_]
    set p [expr {$cfg(aqm.p_offset) + $cfg(aqm.k1) * ($q - $cfg(aqm.q_ref)) + $cfg(aqm.k2) * ($sfc_rate - $c) / $c}]
    $marker set rate_ [expr {min(1.0, max(0.0, $p))}]
    law_log $q $r [expr {min(1.0, max(0.0, $p))}]
    $ns at [expr {[$ns now] + $ts}] "sfc_tick"
}
# ns-2's own PI runs its law in C++ every 1/w_ s; with cfg(law_trace) the same trace samples its
# queue, the arrivals and its probability (`prob_`) every 1/w_ s.
proc pi_trace_tick {} {
    global ns cfg qmon bq last_arr
    set ts [expr {1.0 / $cfg(aqm.w)}]
    set arr [$qmon set parrivals_]
    law_log [$qmon set pkts_] [expr {($arr - $last_arr) / $ts}] [$bq set prob_]
    set last_arr $arr
    $ns at [expr {[$ns now] + $ts}] "pi_trace_tick"
}
if {$cfg(aqm) == "pi" && $law_fh != ""} { $ns at [expr {1.0 / $cfg(aqm.w)}] "pi_trace_tick" }
if {$cfg(aqm) == "pdlq"} { $ns at $cfg(aqm.t_update) "pdlq_tick" }
if {$cfg(aqm) == "sfc"} { $ns at $cfg(aqm.rate_window) "sfc_tick" }

# --- measurements --------------------------------------------------------------------------------
set qsum 0.0
set qn 0
set series {}
proc sample {} {
    global ns qmon qsum qn cfg series
    set q [$qmon set pkts_]
    if {[$ns now] >= $cfg(warmup)} {
        set qsum [expr {$qsum + $q}]
        incr qn
    }
    lappend series $q
    $ns at [expr {[$ns now] + $cfg(sample_interval)}] "sample"
}
$ns at 0.0 "sample"
proc snapshot {} {
    global qmon snap
    foreach k {parrivals_ pdepartures_ pdrops_ bdepartures_ pmarks_} { set snap($k) [$qmon set $k] }
}
$ns at $cfg(warmup) "snapshot"

proc finish {} {
    global ns qmon snap qsum qn cfg rate series short_started law_fh cwnd_fh
    if {$law_fh != ""} { close $law_fh }
    if {[info exists cwnd_fh]} { close $cwnd_fh }
    set span [expr {$cfg(duration) - $cfg(warmup)}]
    if {![info exists snap(parrivals_)]} { foreach k {parrivals_ pdepartures_ pdrops_ bdepartures_ pmarks_} { set snap($k) 0 } }
    foreach k {parrivals_ pdepartures_ pdrops_ bdepartures_ pmarks_} {
        set d($k) [expr {[$qmon set $k] - $snap($k)}]
    }
    set util [expr {$d(bdepartures_) * 8.0 / ($rate * $span)}]
    set mq [expr {$qn > 0 ? $qsum / $qn : 0.0}]
    puts [format {{"mean_queue_pkts": %.6g, "utilization": %.6g, "arrivals": %d, "departures": %d, "drops": %d, "marks": %d, "span_s": %.6g, "short_flows": %d, "sample_interval": %.6g, "queue_series": [%s]}} \
        $mq $util $d(parrivals_) $d(pdepartures_) $d(pdrops_) $d(pmarks_) $span $short_started $cfg(sample_interval) [join $series ", "]]
    exit 0
}
$ns at $cfg(duration) "finish"

# The routes of the dumbbell (rtproto Manual): a host sends everything to its router; R1 sends a
# receiver's packets over the bottleneck and a sender's to its access link, R2 the other way.
# Set last, once every link and the marker (which replaces the bottleneck link's head) exist.
proc route {from to dst} {
    global ns
    [$from get-module Manual] add-route [$dst id] [[$ns link $from $to] head]
}
proc manual_routes {} {
    global ns r1 r2 hosts
    foreach h $hosts {
        lassign $h s d
        [$s get-module Manual] add-route default [[$ns link $s $r1] head]
        [$d get-module Manual] add-route default [[$ns link $d $r2] head]
        route $r1 $r2 $d
        route $r1 $s $s
        route $r2 $d $d
        route $r2 $r1 $s
    }
}
manual_routes
$ns run
