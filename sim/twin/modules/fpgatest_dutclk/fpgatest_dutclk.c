/* SPDX-License-Identifier: BSD-2-Clause
 * fpgatest_dutclk: the simulated device under test's own clocks, a few ppm off the tester's.
 *
 * LiteX's clocker toggles at whole picoseconds of half period (2 ps steps of an 8 ns period: 250 ppm
 * at 125 MHz). Here a clock's half period is given in femtoseconds and edge k falls at
 *   floor((phase_fs + k * half_fs) / 1000) ps,
 * so the mean frequency is that of a whole number of femtoseconds per half period (steps of 0.25 ppm
 * at 125 MHz, where whole picoseconds would be 250 ppm) and each edge is within 1 ps of its exact time. The twin's main loop (sim/twin/core/sim.c) steps to the same edges
 * from the same arguments (dutclk_edges.h).
 *
 * Pads (interface "dutclk"): ab, ba (the clocks of the model's two directions) and own, held at 1
 * while the module runs: the twin then clocks the model from ab and ba instead of from the tester
 * clock (without this module the model runs on the tester clock, as by default).
 *
 * args: {"ab_half_fs": N, "ab_phase_fs": N, "ba_half_fs": N, "ba_phase_fs": N} (integers).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include "error.h"
#include "modules.h"
#include "dutclk_edges.h"

struct session_s {
  uint8_t *ab, *ba, *own;
  struct dutclk_s clk[2];
};

static void *pad(struct pad_s *pads, const char *name)
{
  for (int i = 0; pads[i].name; i++)
    if (!strcmp(pads[i].name, name))
      return pads[i].signal;
  return NULL;
}

static int dutclk_start(void *b)
{
  return RC_OK;
}

static int dutclk_new(void **sess, char *args)
{
  struct session_s *s = calloc(1, sizeof(*s));
  *sess = s;
  if (!s)
    return RC_NOENMEM;
  if (dutclk_parse(args, s->clk) != 0) {
    fprintf(stderr, "[fpgatest_dutclk] bad args: %s\n", args ? args : "(none)");
    return RC_JSERROR;
  }
  printf("[fpgatest_dutclk] half periods %llu / %llu fs\n", (unsigned long long)s->clk[0].half_fs,
         (unsigned long long)s->clk[1].half_fs);
  return RC_OK;
}

static int dutclk_add_pads(void *sess, struct pad_list_s *plist)
{
  struct session_s *s = sess;
  if (!s || !plist)
    return RC_INVARG;
  if (!strcmp(plist->name, "dutclk")) {
    s->ab = pad(plist->pads, "ab");
    s->ba = pad(plist->pads, "ba");
    s->own = pad(plist->pads, "own");
  }
  return RC_OK;
}

static int dutclk_tick(void *sess, uint64_t time_ps)
{
  struct session_s *s = sess;
  if (!s->ab || !s->ba || !s->own)
    return RC_OK;
  *s->own = 1;
  *s->ab = dutclk_level(&s->clk[0], time_ps);
  *s->ba = dutclk_level(&s->clk[1], time_ps);
  return RC_OK;
}

static struct ext_module_s ext_mod = {
  "fpgatest_dutclk",
  dutclk_start,
  dutclk_new,
  dutclk_add_pads,
  NULL,
  dutclk_tick
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
  return register_module(&ext_mod);
}
