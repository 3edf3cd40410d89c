/* SPDX-License-Identifier: BSD-2-Clause
 * fpgatest_tap: one twin port's GMII joined to a Linux TAP interface, so that a real network stack is
 * the device under test (the shape of LiteX's gmii_ethernet sim module, which samples the bus on
 * sys_clk and sets its own addresses; this one runs on the tester clock and leaves the interface's
 * configuration to the launcher, boards/twin.py).
 *
 * Wire -> kernel: on every rising edge of tester_clk the port's tx_data/tx_en is sampled; a frame is
 * the bytes after the SFD (up to seven 0x55 then 0xD5) while tx_en is high. When tx_en falls its FCS
 * is checked: a good frame goes to the TAP without its FCS (a bad one is dropped, as any NIC would).
 * Kernel -> wire: frames read from the TAP (nonblocking, all that are waiting, every POLL_TICKS
 * tester clocks; not from the simulator's event loop, which runs only every 1000 time steps, 4 us of
 * simulated time, and would add that much of its own to every latency) are queued (at most QUEUE_FRAMES: the rest are
 * dropped, and the count is logged at every power of two) and sent on rx_data/rx_dv with 7 bytes of preamble, the SFD, the frame padded
 * to 60 bytes, its FCS, then at least 12 idle bytes.
 * The "on" pad is held at 1 while the module runs: the twin then takes this port's receive side from
 * here instead of from the switch model.
 *
 * args: {"interface": "NAME"} (the TAP is created, in the simulator's network namespace).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>

#include <json-c/json.h>
#include "error.h"
#include "modules.h"

#define MAX_FRAME   16384          /* bytes after the SFD, FCS included */
#define MIN_FRAME   60             /* without FCS */
#define IFG_BYTES   12
#define QUEUE_FRAMES 4096
#define POLL_TICKS  16             /* 128 ns; a read() per 16 clocks costs the twin a few % */

struct frame_s {
  struct frame_s *next;
  size_t len;                      /* with FCS */
  uint8_t data[];
};

struct session_s {
  /* pads */
  uint8_t *tx_data, *tx_en, *rx_data, *rx_dv, *on;
  uint8_t *clk;
  clk_edge_state_t edge;
  /* TAP */
  int fd;
  char ifname[IFNAMSIZ];
  unsigned poll;
  /* wire -> kernel */
  uint8_t tx_buf[MAX_FRAME];
  size_t tx_len;
  int tx_state;                    /* 0 idle, 1 preamble, 2 data, 3 aborted */
  int tx_prev_en;
  /* kernel -> wire */
  struct frame_s *head, *tail;
  size_t queued;
  struct frame_s *current;
  size_t pos;                      /* byte of current: 0..7 preamble+SFD, then frame */
  int idle;                        /* idle bytes still owed before the next frame */
  uint64_t dropped;                /* frames the queue had no room for */
  uint64_t refused;                /* frames the kernel did not take (interface down) */
};

static uint32_t crc_table[256];

static void crc_init(void)
{
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

static uint32_t crc32_eth(const uint8_t *p, size_t n)
{
  uint32_t c = 0xFFFFFFFFu;
  while (n--)
    c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

static int get_arg(char *args, const char *key, char **val)
{
  json_object *js = json_tokener_parse(args), *obj = NULL;
  *val = NULL;
  if (!js || !json_object_object_get_ex(js, key, &obj)) {
    fprintf(stderr, "[fpgatest_tap] missing \"%s\" in %s\n", key, args ? args : "(no args)");
    return RC_JSERROR;
  }
  *val = strdup(json_object_get_string(obj));
  json_object_put(js);
  return RC_OK;
}

static void *pad(struct pad_s *pads, const char *name)
{
  for (int i = 0; pads[i].name; i++)
    if (!strcmp(pads[i].name, name))
      return pads[i].signal;
  return NULL;
}

/* every frame the kernel has for us, queued for the wire */
static void tap_read(struct session_s *s)
{
  uint8_t buf[MAX_FRAME];
  for (;;) {
    ssize_t n = read(s->fd, buf, sizeof(buf) - 4);
    if (n <= 0)
      return;                      /* EAGAIN: nothing more for now */
    if (s->queued >= QUEUE_FRAMES) {
      s->dropped++;
      if ((s->dropped & (s->dropped - 1)) == 0)
        fprintf(stderr, "[fpgatest_tap] %s: queue full, %llu frames dropped\n", s->ifname,
                (unsigned long long)s->dropped);
      continue;
    }
    size_t len = n < MIN_FRAME ? MIN_FRAME : (size_t)n;
    struct frame_s *f = malloc(sizeof(*f) + len + 4);
    if (!f)
      return;
    memcpy(f->data, buf, n);
    memset(f->data + n, 0, len - n);
    uint32_t crc = crc32_eth(f->data, len);
    for (int k = 0; k < 4; k++)
      f->data[len + k] = (crc >> (8 * k)) & 0xFF;
    f->len = len + 4;
    f->next = NULL;
    if (s->tail)
      s->tail->next = f;
    else
      s->head = f;
    s->tail = f;
    s->queued++;
  }
}

static void wire_to_kernel(struct session_s *s)
{
  int en = *s->tx_en & 1;
  uint8_t d = *s->tx_data;
  if (en && !s->tx_prev_en) {
    s->tx_state = 1;
    s->tx_len = 0;
  }
  if (en) {
    if (s->tx_state == 1) {
      if (d == 0xD5)
        s->tx_state = 2;
      else if (d != 0x55)
        s->tx_state = 3;
    } else if (s->tx_state == 2) {
      if (s->tx_len < MAX_FRAME)
        s->tx_buf[s->tx_len++] = d;
      else
        s->tx_state = 3;
    }
  } else if (s->tx_prev_en) {
    if (s->tx_state == 2 && s->tx_len >= MIN_FRAME + 4) {
      size_t n = s->tx_len - 4;
      uint32_t crc = crc32_eth(s->tx_buf, n);
      uint32_t fcs = s->tx_buf[n] | s->tx_buf[n + 1] << 8 | s->tx_buf[n + 2] << 16 | (uint32_t)s->tx_buf[n + 3] << 24;
      /* a down interface refuses the write: the frame is lost, as on an unplugged cable */
      if (crc == fcs && write(s->fd, s->tx_buf, n) != (ssize_t)n)
        s->refused++;
    }
    s->tx_state = 0;
  }
  s->tx_prev_en = en;
}

static void kernel_to_wire(struct session_s *s)
{
  if (!s->current) {
    *s->rx_dv = 0;
    *s->rx_data = 0;
    if (s->idle) {
      s->idle--;
      return;
    }
    if (!s->head)
      return;
    s->current = s->head;
    s->head = s->head->next;
    if (!s->head)
      s->tail = NULL;
    s->queued--;
    s->pos = 0;
  }
  *s->rx_dv = 1;
  if (s->pos < 7)
    *s->rx_data = 0x55;
  else if (s->pos == 7)
    *s->rx_data = 0xD5;
  else
    *s->rx_data = s->current->data[s->pos - 8];
  s->pos++;
  if (s->pos == s->current->len + 8) {
    free(s->current);
    s->current = NULL;
    s->idle = IFG_BYTES - 1;       /* this edge's idle byte is the next call's */
  }
}

static int tap_start(void *b)
{
  crc_init();
  return RC_OK;
}

static int tap_new(void **sess, char *args)
{
  struct session_s *s = calloc(1, sizeof(*s));
  char *name = NULL;
  struct ifreq ifr;
  *sess = s;
  if (!s)
    return RC_NOENMEM;
  if (get_arg(args, "interface", &name) != RC_OK)
    return RC_JSERROR;
  s->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (s->fd < 0) {
    fprintf(stderr, "[fpgatest_tap] cannot open /dev/net/tun: %s\n", strerror(errno));
    free(name);
    return RC_ERROR;
  }
  memset(&ifr, 0, sizeof(ifr));
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
  free(name);
  if (ioctl(s->fd, TUNSETIFF, &ifr) < 0) {
    fprintf(stderr, "[fpgatest_tap] cannot create TAP %s: %s\n", ifr.ifr_name, strerror(errno));
    close(s->fd);
    return RC_ERROR;
  }
  snprintf(s->ifname, IFNAMSIZ, "%s", ifr.ifr_name);
  printf("[fpgatest_tap] %s up\n", s->ifname);
  return RC_OK;
}

static int tap_add_pads(void *sess, struct pad_list_s *plist)
{
  struct session_s *s = sess;
  if (!s || !plist)
    return RC_INVARG;
  if (!strcmp(plist->name, "tap")) {
    s->tx_data = pad(plist->pads, "tx_data");
    s->tx_en = pad(plist->pads, "tx_en");
    s->rx_data = pad(plist->pads, "rx_data");
    s->rx_dv = pad(plist->pads, "rx_dv");
    s->on = pad(plist->pads, "on");
  } else if (!strcmp(plist->name, "tester_clk")) {
    s->clk = pad(plist->pads, "tester_clk");
  }
  return RC_OK;
}

static int tap_tick(void *sess, uint64_t time_ps)
{
  struct session_s *s = sess;
  if (!clk_pos_edge(&s->edge, *s->clk))
    return RC_OK;
  *s->on = 1;
  wire_to_kernel(s);
  if (++s->poll == POLL_TICKS) {
    s->poll = 0;
    tap_read(s);
  }
  kernel_to_wire(s);
  return RC_OK;
}

static struct ext_module_s ext_mod = {
  "fpgatest_tap",
  tap_start,
  tap_new,
  tap_add_pads,
  NULL,
  tap_tick
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
  return register_module(&ext_mod);
}
