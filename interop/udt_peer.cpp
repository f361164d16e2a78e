// Interop peer for haul's tests, written against the UDT4 reference library (Debian libudt-dev).
//
//   udt_peer serve-file  PORT FILE                  listen, accept one client, sendfile2 FILE
//   udt_peer fetch-file  HOST PORT OUT SIZE          connect, recvfile2 SIZE bytes into OUT
//   udt_peer serve-stream PORT IN OUT EXPECT         listen, accept; send IN while receiving
//   udt_peer stream      HOST PORT IN OUT EXPECT     connect;  EXPECT bytes into OUT; close
//   udt_peer serve-echo-msg PORT                     DGRAM listener: echo each message back
//   udt_peer rendezvous  LPORT HOST PORT IN OUT EXPECT   rendezvous, then as `stream`
//   udt_peer perf-recv   PORT                        listen, accept; receive until the peer
//                                                    closes; print "BYTES SECONDS" (haul lab)
//   udt_peer perf-send   HOST PORT SECONDS           connect; send for SECONDS; close
//
// The perf modes size UDT's buffers and flow window for long fat paths (256 MB, like the TCP
// buffers of haul's lab), so the reference is limited by its protocol, not by its defaults.
//
// Prints "ready" on stdout once listening (servers) so the test knows when to start.
#include <udt/udt.h>

#include <arpa/inet.h>
#include <chrono>
#include <netdb.h>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

static void die(const char* what) {
    std::cerr << "udt_peer: " << what << ": " << UDT::getlasterror().getErrorMessage() << std::endl;
    std::exit(2);
}

static sockaddr_in address(const char* host, int port) {
    sockaddr_in a;
    std::memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (host == nullptr) {
        a.sin_addr.s_addr = INADDR_ANY;
    } else if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        std::cerr << "udt_peer: bad IPv4 address " << host << std::endl;
        std::exit(2);
    }
    return a;
}

static bool g_large_buffers = false;

static UDTSOCKET make(int type) {
    UDTSOCKET s = UDT::socket(AF_INET, type, 0);
    if (s == UDT::INVALID_SOCK) die("socket");
    if (g_large_buffers) {
        int udt_buf = 256 << 20, udp_buf = 64 << 20, window = 200000;
        UDT::setsockopt(s, 0, UDT_SNDBUF, &udt_buf, sizeof udt_buf);
        UDT::setsockopt(s, 0, UDT_RCVBUF, &udt_buf, sizeof udt_buf);
        UDT::setsockopt(s, 0, UDP_SNDBUF, &udp_buf, sizeof udp_buf);
        UDT::setsockopt(s, 0, UDP_RCVBUF, &udp_buf, sizeof udp_buf);
        UDT::setsockopt(s, 0, UDT_FC, &window, sizeof window);
    }
    return s;
}

static UDTSOCKET listen_accept(int port, int type) {
    UDTSOCKET l = make(type);
    sockaddr_in a = address(nullptr, port);
    if (UDT::bind(l, (sockaddr*)&a, sizeof a) == UDT::ERROR) die("bind");
    if (UDT::listen(l, 10) == UDT::ERROR) die("listen");
    std::cout << "ready" << std::endl;
    sockaddr_in peer;
    int len = sizeof peer;
    UDTSOCKET c = UDT::accept(l, (sockaddr*)&peer, &len);
    if (c == UDT::INVALID_SOCK) die("accept");
    UDT::close(l);
    return c;
}

static UDTSOCKET connect_to(const char* host, int port, int type) {
    UDTSOCKET s = make(type);
    sockaddr_in a = address(host, port);
    if (UDT::connect(s, (sockaddr*)&a, sizeof a) == UDT::ERROR) die("connect");
    return s;
}

// Sends the whole file IN while another thread receives EXPECT bytes into OUT.
static void stream(UDTSOCKET s, const char* in, const char* out, long long expect) {
    std::thread receiver([&] {
        std::ofstream o(out, std::ios::binary);
        std::vector<char> buf(1 << 20);
        long long got = 0;
        while (got < expect) {
            int n = UDT::recv(s, buf.data(), (int)std::min<long long>(buf.size(), expect - got), 0);
            if (n == UDT::ERROR) die("recv");
            o.write(buf.data(), n);
            got += n;
        }
    });
    std::ifstream i(in, std::ios::binary);
    std::vector<char> buf(1 << 20);
    while (i) {
        i.read(buf.data(), buf.size());
        std::streamsize n = i.gcount();
        for (std::streamsize off = 0; off < n;) {
            int w = UDT::send(s, buf.data() + off, (int)(n - off), 0);
            if (w == UDT::ERROR) die("send");
            off += w;
        }
    }
    receiver.join();
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: see the comment at the top of udt_peer.cpp" << std::endl;
        return 2;
    }
    std::string mode = argv[1];
    UDT::startup();
    if (mode == "serve-file" && argc == 4) {
        UDTSOCKET c = listen_accept(std::atoi(argv[2]), SOCK_STREAM);
        std::ifstream probe(argv[3], std::ios::binary | std::ios::ate);
        int64_t size = probe.tellg();
        int64_t offset = 0;
        if (UDT::sendfile2(c, argv[3], &offset, size) == UDT::ERROR) die("sendfile2");
        UDT::close(c);
    } else if (mode == "fetch-file" && argc == 6) {
        UDTSOCKET s = connect_to(argv[2], std::atoi(argv[3]), SOCK_STREAM);
        int64_t offset = 0;
        int64_t size = std::atoll(argv[5]);
        if (UDT::recvfile2(s, argv[4], &offset, size) == UDT::ERROR) die("recvfile2");
        UDT::close(s);
    } else if (mode == "serve-stream" && argc == 6) {
        UDTSOCKET c = listen_accept(std::atoi(argv[2]), SOCK_STREAM);
        stream(c, argv[3], argv[4], std::atoll(argv[5]));
        UDT::close(c);
    } else if (mode == "stream" && argc == 7) {
        UDTSOCKET s = connect_to(argv[2], std::atoi(argv[3]), SOCK_STREAM);
        stream(s, argv[4], argv[5], std::atoll(argv[6]));
        UDT::close(s);
    } else if (mode == "serve-echo-msg" && argc == 3) {
        UDTSOCKET c = listen_accept(std::atoi(argv[2]), SOCK_DGRAM);
        std::vector<char> buf(1 << 20);
        for (;;) {
            int n = UDT::recvmsg(c, buf.data(), (int)buf.size());
            if (n == UDT::ERROR) break;  // the peer closed
            if (UDT::sendmsg(c, buf.data(), n, -1, true) == UDT::ERROR) die("sendmsg");
        }
        UDT::close(c);
    } else if (mode == "rendezvous" && argc == 8) {
        UDTSOCKET s = make(SOCK_STREAM);
        bool rdv = true;
        UDT::setsockopt(s, 0, UDT_RENDEZVOUS, &rdv, sizeof rdv);
        sockaddr_in local = address(nullptr, std::atoi(argv[2]));
        if (UDT::bind(s, (sockaddr*)&local, sizeof local) == UDT::ERROR) die("bind");
        std::cout << "ready" << std::endl;
        sockaddr_in peer = address(argv[3], std::atoi(argv[4]));
        if (UDT::connect(s, (sockaddr*)&peer, sizeof peer) == UDT::ERROR) die("rendezvous connect");
        stream(s, argv[5], argv[6], std::atoll(argv[7]));
        UDT::close(s);
    } else if (mode == "perf-recv" && argc == 3) {
        g_large_buffers = true;
        UDTSOCKET c = listen_accept(std::atoi(argv[2]), SOCK_STREAM);
        auto start = std::chrono::steady_clock::now();
        auto last = start;
        long long got = 0;
        std::vector<char> buf(1 << 20);
        for (;;) {
            int n = UDT::recv(c, buf.data(), (int)buf.size(), 0);
            if (n == UDT::ERROR) break;  // the peer closed
            got += n;
            last = std::chrono::steady_clock::now();
        }
        std::cout << got << " " << std::chrono::duration<double>(last - start).count() << std::endl;
        UDT::close(c);
    } else if (mode == "perf-send" && argc == 5) {
        g_large_buffers = true;
        UDTSOCKET s = connect_to(argv[2], std::atoi(argv[3]), SOCK_STREAM);
        auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(argv[4]));
        std::vector<char> buf(1 << 20, 'h');
        while (std::chrono::steady_clock::now() < end) {
            // Keep about two bandwidth-delay products unacknowledged (as TCP's autotuned send
            // buffer does), so the test ends on time instead of draining a 256 MB buffer.
            UDT::TRACEINFO perf;
            int pending = 0, len = sizeof pending;
            UDT::perfmon(s, &perf, false);
            UDT::getsockopt(s, 0, UDT_SNDDATA, &pending, &len);
            double limit = std::max(4e6, 2.0 * perf.mbpsSendRate * 1e6 / 8 * perf.msRTT / 1e3);
            if (pending * 1456.0 > limit) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            if (UDT::send(s, buf.data(), (int)buf.size(), 0) == UDT::ERROR) die("send");
        }
        UDT::close(s);
    } else {
        std::cerr << "udt_peer: bad arguments for mode " << mode << std::endl;
        return 2;
    }
    UDT::cleanup();
    return 0;
}
