// A lossy short path in uet-htsim: our own driver against its library (main_uec has no loss
// option). Two hosts on one 3 m 100G cable (15 ns), each direction losing a share of its
// frames at random (an ExoQueue after the cable), one 2 MB flow: NSCC with or without SLEEK,
// or RCCC (receiver credit, uet-htsim's pull pacer at 0.99 of line rate).
//
// Build as parking_lot.cpp (with dac_loss.cpp); run: ./dac_loss LOSS SEED SLEEK(0|1) [rccc]
// It prints the flow's completion ("finished at", us).
#include "eventlist.h"
#include "compositequeue.h"
#include "exoqueue.h"
#include "pipe.h"
#include "uec.h"
#include "uec_mp.h"
#include "config.h"
#include <cstdlib>
#include <iostream>
#include <memory>
using namespace std;

int main(int argc, char** argv) {
    double loss = argc > 1 ? atof(argv[1]) : 0.01;
    srandom(argc > 2 ? atoi(argv[2]) : 1);
    UecSrc::_enable_sleek = argc > 3 && atoi(argv[3]) != 0;
    EventList eventlist;
    eventlist.setEndtime(timeFromUs(50000.0));
    Packet::set_packet_size(4150);
    UecSrc::_mtu = Packet::data_packet_size();
    UecSrc::_mss = UecSrc::_mtu - UecSrc::_hdr_size;
    bool rccc = argc > 4 && string(argv[4]) == "rccc";
    UecSrc::_sender_based_cc = !rccc;
    UecSrc::_receiver_based_cc = rccc;
    linkspeed_bps speed = speedFromGbps(100);
    simtime_picosec d = timeFromNs(15);
    auto ser = [&](mem_b b) { return (simtime_picosec)(b * 8 * 1000 / 100); };
    simtime_picosec rtt = 2 * d + ser(4150) + ser(64);
    UecSrc::initNsccParams(rtt, speed, 0, 3, false);
    UecNIC n0(0, eventlist, speed, 1), n1(1, eventlist, speed, 1);
    auto* src = new UecSrc(NULL, eventlist, make_unique<UecMpOblivious>(1, false), n0, 1);
    UecPullPacer pacer(speed, 0.99, UecBasePacket::unquantize(UecSink::_credit_per_pull), eventlist, 1);
    auto* snk = rccc ? new UecSink(NULL, &pacer, n1, 1)
                     : new UecSink(NULL, speed, 1.1, UecBasePacket::unquantize(UecSink::_credit_per_pull), eventlist, n1, 1);
    src->setFlowsize(2000000);
    if (rccc)
        src->initRccc(0, rtt);
    else
        src->initNscc(0, rtt);
    auto* ro = new Route();
    ro->push_back(new CompositeQueue(speed, 1 << 30, eventlist, NULL, 64));
    ro->push_back(new Pipe(d, eventlist));
    ro->push_back(new ExoQueue(loss));
    ro->push_back(snk->getPort(0));
    auto* rb = new Route();
    rb->push_back(new CompositeQueue(speed, 1 << 30, eventlist, NULL, 64));
    rb->push_back(new Pipe(d, eventlist));
    rb->push_back(new ExoQueue(loss));
    rb->push_back(src->getPort(0));
    src->setName("src");
    snk->setName("snk");
    src->connectPort(0, *ro, *rb, *snk, 0);
    while (eventlist.doNextEvent()) {}
}
