// RCCC into a deep buffer in uet-htsim: our own driver against its library. N senders on one
// switch send S bytes each to one receiver on 100G, 1 us cables; the receiver's port queue
// holds 42 MB (no trimming, no drop). Prints the queue every 100 us and each completion.
//
// Build as parking_lot.cpp; run: ./rccc_incast N BYTES
#include "eventlist.h"
#include "compositequeue.h"
#include "pipe.h"
#include "uec.h"
#include "uec_mp.h"
#include "config.h"
#include <cstdlib>
#include <iostream>
#include <memory>
#include <vector>
using namespace std;

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 16;
    mem_b size = argc > 2 ? atoll(argv[2]) : 4000000;
    EventList eventlist;
    eventlist.setEndtime(timeFromUs(20000.0));
    Packet::set_packet_size(4150);
    UecSrc::_mtu = Packet::data_packet_size();
    UecSrc::_mss = UecSrc::_mtu - UecSrc::_hdr_size;
    UecSrc::_sender_based_cc = false;
    UecSrc::_receiver_based_cc = true;
    linkspeed_bps speed = speedFromGbps(100);
    simtime_picosec d = timeFromUs(1.0);
    auto ser = [&](mem_b b) { return (simtime_picosec)(b * 8 * 1000 / 100); };
    simtime_picosec rtt = 4 * d + 2 * ser(4150) + 2 * ser(64);
    mem_b deep = 42000000;
    auto q = [&](mem_b s) { return new CompositeQueue(speed, s, eventlist, NULL, 64, true); };
    vector<unique_ptr<UecNIC>> nics;
    for (int h = 0; h <= n; h++) nics.push_back(make_unique<UecNIC>(h, eventlist, speed, 1));
    UecPullPacer pacer(speed, 0.99, UecBasePacket::unquantize(UecSink::_credit_per_pull), eventlist, 1);
    // receiver h0: its downlink (the queue that matters) and its uplink
    auto* down = q(deep);
    auto* downpipe = new Pipe(d, eventlist);
    auto* sinkup = q(deep);
    auto* sinkuppipe = new Pipe(d, eventlist);
    for (int h = 1; h <= n; h++) {
        auto* src = new UecSrc(NULL, eventlist, make_unique<UecMpOblivious>(1, false), *nics[h], 1);
        auto* snk = new UecSink(NULL, &pacer, *nics[0], 1);
        src->setFlowsize(size);
        src->initRccc(0, rtt);
        auto* ro = new Route();
        ro->push_back(q(deep)); ro->push_back(new Pipe(d, eventlist));
        ro->push_back(down); ro->push_back(downpipe); ro->push_back(snk->getPort(0));
        auto* rb = new Route();
        rb->push_back(sinkup); rb->push_back(sinkuppipe);
        rb->push_back(q(deep)); rb->push_back(new Pipe(d, eventlist)); rb->push_back(src->getPort(0));
        src->setName("src" + to_string(h));
        snk->setName("snk" + to_string(h));
        src->connectPort(0, *ro, *rb, *snk, 0);
    }
    simtime_picosec next = 0;
    while (eventlist.doNextEvent()) {
        if (eventlist.now() >= next) {
            cout << "queue " << timeAsUs(eventlist.now()) << " us " << down->_queuesize_low << " B" << endl;
            next += timeFromUs(100.0);
        }
    }
}
