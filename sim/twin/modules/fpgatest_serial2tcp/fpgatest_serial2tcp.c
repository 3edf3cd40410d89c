/* SPDX-License-Identifier: BSD-2-Clause
 * fpgatest_serial2tcp: LiteX's serial2tcp sim module (litex/build/sim/core/modules/serial2tcp,
 * BSD-2-Clause, copied from LiteX 2024.12) with what a twin on a shared machine needs:
 * - it listens on 127.0.0.1 only, not on every interface;
 * - one client at a time: a second connection is closed at once (it used to take over the session
 *   and crash the simulator within seconds), the first one keeps working;
 * - a client that goes away (EOF, or a failed send, which raises no SIGPIPE) frees the session for the next one instead of
 *   leaving a dead descriptor that the next reply is written to (an error that stopped the simulator);
 * - bytes beyond the 2048-byte input buffer are dropped, not written over the ones still queued;
 * - the reply goes out without Nagle's delay (TCP_NODELAY): the bridge sends one byte per clock, and
 *   with Nagle every byte after a reply's first waited for the client's delayed ACK (40 ms per
 *   register read);
 * - the reply goes out whole, in one send(), once the bridge has sent nothing for FLUSH_QUIET_CLOCKS
 *   clocks (or the buffer is full), not as one send() and one TCP segment per byte: a burst read's
 *   words come a few clocks apart, so a reply is one segment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <event2/event.h>

#include <json-c/json.h>
#include "modules.h"

#define FLUSH_QUIET_CLOCKS 16

struct session_s {
  char *tx;
  char *tx_valid;
  char *tx_ready;
  char *rx;
  char *rx_valid;
  char *rx_ready;
  char *sys_clk;
  struct event *ev;
  char databuf[2048];
  int data_start;
  int datalen;
  char outbuf[4096];  // the reply so far, not yet sent
  int outlen;
  int quiet;          // clocks since the bridge last sent a byte
  int fd;
};

/* The client is gone: the session is free for the next one. */
static void drop_client(struct session_s *s)
{
  event_del(s->ev);
  event_free(s->ev);
  s->ev = NULL;
  close(s->fd);
  s->fd = 0;
  s->outlen = 0;
}

/* The reply so far to the client, whole; a failed send (which raises no SIGPIPE) drops the client. */
static void flush_reply(struct session_s *s)
{
  int sent = 0, n;
  while(s->fd && sent < s->outlen) {
    n = send(s->fd, s->outbuf + sent, s->outlen - sent, MSG_NOSIGNAL);
    if(n <= 0) {
      drop_client(s);
      break;
    }
    sent += n;
  }
  s->outlen = 0;
}

struct event_base *base;

int litex_sim_module_get_args( char *args, char *arg, char **val)
{
  int ret = RC_OK;
  json_object *jsobj = NULL;
  json_object *obj = NULL;
  char *value = NULL;
  int r;

  if(!arg) {
    fprintf(stderr, "litex_sim_module_get_args(): `arg` (requested .json key) is NULL!\n");
    ret=RC_JSERROR;
    goto out;
  }

  if(!args) {
    fprintf(stderr, "missing key in .json file: %s\n", arg);
    ret=RC_JSERROR;
    goto out;
  }

  jsobj = json_tokener_parse(args);
  if(NULL==jsobj) {
    fprintf(stderr, "Error parsing json arg: %s \n", args);
    ret=RC_JSERROR;
    goto out;
  }
  if(!json_object_is_type(jsobj, json_type_object)) {
    fprintf(stderr, "Arg must be type object! : %s \n", args);
    ret=RC_JSERROR;
    goto out;
  }
  obj=NULL;
  r = json_object_object_get_ex(jsobj, arg, &obj);
  if(!r) {
    fprintf(stderr, "Could not find object: \"%s\" (%s)\n", arg, args);
    ret=RC_JSERROR;
    goto out;
  }
  value=strdup(json_object_get_string(obj));

out:
  *val = value;
  return ret;
}

static int litex_sim_module_pads_get( struct pad_s *pads, char *name, void **signal)
{
  int ret = RC_OK;
  void *sig = NULL;
  int i;

  if(!pads || !name || !signal) {
    ret = RC_INVARG;
    goto out;
  }

  i = 0;
  while(pads[i].name) {
    if(!strcmp(pads[i].name, name)) {
      sig = (void*)pads[i].signal;
      break;
    }
    i++;
  }

out:
  *signal = sig;
  return ret;
}

static int serial2tcp_start(void *b)
{
  base = (struct event_base *)b;
  printf("[serial2tcp] loaded (%p)\n", base);
  return RC_OK;
}

void read_handler(int fd, short event, void *arg)
{
  struct session_s *s = (struct session_s*)arg;
  char buffer[1024];
  ssize_t read_len;
  int i;

  read_len = read(fd, buffer, 1024);
  if (read_len <= 0) {
    // EOF or an error: the client is gone; the session is free for the next one
    drop_client(s);
    return;
  }
  for(i = 0; i < read_len && s->datalen < 2048; i++)
  {
    s->databuf[(s->data_start +  s->datalen ) % 2048] = buffer[i];
    s->datalen++;
  }
}

static void event_handler(int fd, short event, void *arg)
{
  if (event & EV_READ)
    read_handler(fd, event, arg);
}

static void accept_conn_cb(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *address, int socklen,  void *ctx)
{
  struct session_s *s = (struct session_s*)ctx;
  struct timeval tv = {1, 0};

  if (s->fd) {
    char b;
    // a client that closed just before this one connected, its EOF not yet handled: free it
    if (recv(s->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
      drop_client(s);
    } else {
      // one client at a time: refuse the newcomer, keep the session
      close(fd);
      return;
    }
  }
  s->fd = fd;
  {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  s->ev = event_new(base, fd, EV_READ | EV_PERSIST , event_handler, s);
  event_add(s->ev, &tv);
}

static void
accept_error_cb(struct evconnlistener *listener, void *ctx)
{
  struct event_base *base = evconnlistener_get_base(listener);
  eprintf("ERROR\n");

  event_base_loopexit(base, NULL);
}

static int serial2tcp_new(void **sess, char *args)
{
  int ret = RC_OK;
  struct session_s *s = NULL;
  char *cport = NULL;
  int port;
  struct evconnlistener *listener;
  struct sockaddr_in sin;

  if(!sess) {
    ret = RC_INVARG;
    goto out;
  }
  ret = litex_sim_module_get_args(args, "port", &cport);
  if(RC_OK != ret)
    goto out;

  printf("Found port %s\n", cport);
  sscanf(cport, "%d", &port);
  free(cport);
  if(!port) {
    ret = RC_ERROR;
    fprintf(stderr, "Invalid port selected!\n");
    goto out;
  }

  s=(struct session_s*)malloc(sizeof(struct session_s));
  if(!s) {
    ret = RC_NOENMEM;
    goto out;
  }
  memset(s, 0, sizeof(struct session_s));

  memset(&sin, 0, sizeof(sin));
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sin.sin_port = htons(port);
  listener = evconnlistener_new_bind(base, accept_conn_cb, s,  LEV_OPT_CLOSE_ON_FREE|LEV_OPT_REUSEABLE, -1, (struct sockaddr*)&sin, sizeof(sin));
  if (!listener) {
    ret=RC_ERROR;
    eprintf("Can't bind port %d\n!\n", port);
    goto out;
  }
  evconnlistener_set_error_cb(listener, accept_error_cb);

out:
  *sess=(void*)s;
  return ret;
}

static int serial2tcp_add_pads(void *sess, struct pad_list_s *plist)
{
  int ret = RC_OK;
  struct session_s *s=(struct session_s*)sess;
  struct pad_s *pads;
  if(!sess || !plist) {
    ret = RC_INVARG;
    goto out;
  }
  pads = plist->pads;
  if(!strcmp(plist->name, "serial")) {
    litex_sim_module_pads_get(pads, "sink_data", (void**)&s->rx);
    litex_sim_module_pads_get(pads, "sink_valid", (void**)&s->rx_valid);
    litex_sim_module_pads_get(pads, "sink_ready", (void**)&s->rx_ready);
    litex_sim_module_pads_get(pads, "source_data", (void**)&s->tx);
    litex_sim_module_pads_get(pads, "source_valid", (void**)&s->tx_valid);
    litex_sim_module_pads_get(pads, "source_ready", (void**)&s->tx_ready);
  }

  if(!strcmp(plist->name, "sys_clk"))
    litex_sim_module_pads_get(pads, "sys_clk", (void**)&s->sys_clk);

out:
  return ret;

}
static int serial2tcp_tick(void *sess, uint64_t time_ps)
{
  static clk_edge_state_t edge;
  char c;
  int ret = RC_OK;

  struct session_s *s = (struct session_s*)sess;
  if(!clk_pos_edge(&edge, *s->sys_clk)) {
    return RC_OK;
  }

  *s->tx_ready = 1;
  if(s->fd && *s->tx_valid) {
    s->outbuf[s->outlen++] = *s->tx;
    s->quiet = 0;
    if(s->outlen == sizeof(s->outbuf))
      flush_reply(s);
  } else if(s->outlen && ++s->quiet >= FLUSH_QUIET_CLOCKS) {
    flush_reply(s);
  }

  *s->rx_valid=0;
  if(s->datalen) {
    c = s->databuf[s->data_start];
    *s->rx = c;
    *s->rx_valid=1;
    if (*s->rx_ready) {
      s->data_start = (s->data_start + 1) % 2048;
      s->datalen--;
    }
  }

  return ret;
}

static struct ext_module_s ext_mod = {
  "fpgatest_serial2tcp",
  serial2tcp_start,
  serial2tcp_new,
  serial2tcp_add_pads,
  NULL,
  serial2tcp_tick
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
  int ret = RC_OK;
  ret = register_module(&ext_mod);
  return ret;
}
