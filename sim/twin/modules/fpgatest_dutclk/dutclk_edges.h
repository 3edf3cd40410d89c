/* SPDX-License-Identifier: BSD-2-Clause
 * The edges of fpgatest_dutclk's clocks, shared by the module (which toggles them) and the twin's
 * main loop (sim/twin/core/sim.c, which steps to them): edge k at floor((phase_fs + k * half_fs) / 1000)
 * ps, the first one rising.
 */
#ifndef DUTCLK_EDGES_H
#define DUTCLK_EDGES_H

#include <stdint.h>
#include <json-c/json.h>

struct dutclk_s {
  uint64_t half_fs;
  uint64_t phase_fs;
};

/* the edges at or before t ps */
static inline uint64_t dutclk_count(const struct dutclk_s *c, uint64_t t_ps)
{
  uint64_t end_fs = (t_ps + 1) * 1000;      /* edge k <= t  <=>  phase + k * half < (t + 1) * 1000 */
  if (end_fs <= c->phase_fs)
    return 0;
  return (end_fs - c->phase_fs + c->half_fs - 1) / c->half_fs;
}

static inline uint8_t dutclk_level(const struct dutclk_s *c, uint64_t t_ps)
{
  return dutclk_count(c, t_ps) & 1;
}

/* the first edge after t ps */
static inline uint64_t dutclk_next(const struct dutclk_s *c, uint64_t t_ps)
{
  return (c->phase_fs + dutclk_count(c, t_ps) * c->half_fs) / 1000;
}

static inline int dutclk_get(json_object *js, const char *key, uint64_t *v)
{
  json_object *obj = NULL;
  if (!json_object_object_get_ex(js, key, &obj) || json_object_get_int64(obj) < 0)
    return -1;
  *v = (uint64_t)json_object_get_int64(obj);
  return 0;
}

/* args {"ab_half_fs", "ab_phase_fs", "ba_half_fs", "ba_phase_fs"} -> clk[0] (ab), clk[1] (ba) */
static inline int dutclk_parse(const char *args, struct dutclk_s clk[2])
{
  json_object *js = args ? json_tokener_parse(args) : NULL;
  int bad = !js || dutclk_get(js, "ab_half_fs", &clk[0].half_fs) || dutclk_get(js, "ab_phase_fs", &clk[0].phase_fs)
            || dutclk_get(js, "ba_half_fs", &clk[1].half_fs) || dutclk_get(js, "ba_phase_fs", &clk[1].phase_fs)
            || clk[0].half_fs < 1000 || clk[1].half_fs < 1000;
  if (js)
    json_object_put(js);
  return bad ? -1 : 0;
}

#endif
