// The parking lot of tests/integration/uet_recovery.rs, run in uet-htsim: our own driver against
// its library (its main_uec builds only fat trees and the like). Three switches in a chain, 100G
// and 1 us on every cable, NSCC only (-sender_cc_only), trimming at 200 KB (64 B headers), ECN
// from 20 to 80 KB; one flow across both chain links (h0 -> h6), two one-hop flows on each.
// Routes are explicit: each hop a CompositeQueue then a Pipe, as uet-htsim's topologies build
// them. Prints each flow's goodput over the run.
//
// Build (after ../shared/uet-htsim/build.sh, whose folder holds htsim/sim):
//   H=/tmp/uet-htsim/htsim/sim
//   g++ -O2 -std=c++17 -I$H -I$H/datacenter parking_lot.cpp \
//       $H/build/datacenter/libhtsim_dc.a $H/build/libhtsim.a -o parking_lot
//   ./parking_lot 3 [seed]      # simulated milliseconds, random seed (1)
#include "eventlist.h"
#include "compositequeue.h"
#include "pipe.h"
#include "uec.h"
#include "uec_mp.h"
#include "config.h"
#include <iostream>
#include <memory>
#include <vector>
using namespace std;

int main(int argc, char** argv) {
    EventList eventlist;
    double ms = argc > 1 ? atof(argv[1]) : 3.0;
    int seed = argc > 2 ? atoi(argv[2]) : 1;
    srand(seed);
    srandom(seed);
    eventlist.setEndtime(timeFromUs(ms * 1000));
    Packet::set_packet_size(4150);
    UecSrc::_mtu = Packet::data_packet_size();
    UecSrc::_mss = UecSrc::_mtu - UecSrc::_hdr_size;
    UecSrc::_sender_based_cc = true;
    UecSrc::_receiver_based_cc = false;
    linkspeed_bps speed = speedFromGbps(100);
    simtime_picosec d = timeFromUs(1.0);
    mem_b qsize = 200000 + 4150, kmin = 20000, kmax = 80000;
    auto ser = [&](mem_b b) { return (simtime_picosec)(b * 8 * 1000 / 100); };  // ps at 100G
    simtime_picosec net_rtt = 8 * d + 4 * ser(4150) + 4 * ser(64);
    UecSrc::initNsccParams(net_rtt, speed, 0, 3, true);
    // one directed hop: a queue then a pipe
    auto hop = [&](mem_b size) {
        auto* q = new CompositeQueue(speed, size, eventlist, NULL, 64);
        q->set_ecn_thresholds(kmin, kmax);
        return make_pair((PacketSink*)q, (PacketSink*)new Pipe(d, eventlist));
    };
    // hosts: 0-2 on S0, 3-5 on S1, 6-8 on S2. Links: host up/down, S0->S1, S1->S2 and back.
    vector<pair<PacketSink*, PacketSink*>> up(9), down(9);
    for (int h = 0; h < 9; h++) { up[h] = hop(1 << 30); down[h] = hop(qsize); }
    auto s01 = hop(qsize), s12 = hop(qsize), s10 = hop(qsize), s21 = hop(qsize);
    auto sw = [&](int h) { return h / 3; };
    auto path = [&](int a, int b) {  // hops from host a to host b
        vector<pair<PacketSink*, PacketSink*>> v{up[a]};
        for (int s = sw(a); s < sw(b); s++) v.push_back(s == 0 ? s01 : s12);
        for (int s = sw(a); s > sw(b); s--) v.push_back(s == 2 ? s21 : s10);
        v.push_back(down[b]);
        return v;
    };
    vector<unique_ptr<UecNIC>> nics;
    for (int h = 0; h < 9; h++) nics.push_back(make_unique<UecNIC>(h, eventlist, speed, 1));
    int flows[5][2] = {{0, 6}, {1, 3}, {2, 4}, {4, 7}, {5, 8}};
    if (argc > 3 && atoi(argv[3]) > 0) flows[3][0] = atoi(argv[3]);  // the second link's first one-hop sender
    if (argc > 4) swap(flows[1], flows[2]);  // create the first link's one-hop flows in the other order
    vector<UecSink*> sinks;
    for (auto& f : flows) {
        auto* src = new UecSrc(NULL, eventlist, make_unique<UecMpReps>(64, false, true), *nics[f[0]], 1);
        auto* snk = new UecSink(NULL, speed, 1.1, UecBasePacket::unquantize(UecSink::_credit_per_pull), eventlist, *nics[f[1]], 1);
        src->setFlowsize(100000000);
        auto fwd = path(f[0], f[1]), back = path(f[1], f[0]);
        int links = fwd.size();
        src->initNscc(0, 2 * links * d + links * ser(4150) + links * ser(64));
        auto* ro = new Route();
        for (auto& x : fwd) { ro->push_back(x.first); ro->push_back(x.second); }
        ro->push_back(snk->getPort(0));
        auto* rb = new Route();
        for (auto& x : back) { rb->push_back(x.first); rb->push_back(x.second); }
        rb->push_back(src->getPort(0));
        src->setName("src" + to_string(f[0]));
        snk->setName("snk" + to_string(f[1]));
        src->connectPort(0, *ro, *rb, *snk, 0);
        sinks.push_back(snk);
    }
    while (eventlist.doNextEvent()) {}
    for (size_t i = 0; i < sinks.size(); i++)
        cout << "flow " << flows[i][0] << "->" << flows[i][1] << " " << sinks[i]->total_received() * 8.0 / (ms * 1e-3) / 1e9 << " Gb/s" << endl;
}
