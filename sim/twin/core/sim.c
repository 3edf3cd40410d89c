/* Copyright (C) 2017 LambdaConcept */
/* SPDX-License-Identifier: BSD-2-Clause
 * The twin's copy of LiteX's simulator main (litex/build/sim/core/sim.c). Its modules, their pads and
 * sim_config.js are LiteX's; three things differ:
 * - The clocks are driven from here, not by modules: sim_config's "clocker" entries (LiteX's clocker
 *   module's arguments) and its "fpgatest_dutclk" entry (the device model's two clocks of their own,
 *   --dut-ppm) name them, and each step sets every clock pad to its level.
 * - Time goes from one clock edge to the next, not in steps of the greatest common divisor of every
 *   half period (LiteX's steps are 2 ns for the board's clocks, sys 50 MHz and tester 125 MHz, and
 *   most of them would change no clock).
 * - A clock marked "rising_only" (no logic acts on its falling edges: boards/twin.py checks the
 *   Verilated model's triggers) takes no step of its own for a falling edge: the pad falls at the
 *   next step, which comes before its next rising edge (a step is taken at the fall itself where
 *   none would). Nothing is evaluated in between, so the model sees what it would have seen. For
 *   sys and tester that is 10 steps per 40 ns instead of 12.
 */

#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#ifndef _WIN32
#include <netinet/in.h>
# ifdef _XOPEN_SOURCE_EXTENDED
#  include <arpa/inet.h>
# endif
#include <sys/socket.h>
#endif
#include <stdlib.h>
#include "error.h"
#include "modules.h"
#include "pads.h"
#include "veril.h"

#include <json-c/json.h>

#include <event2/listener.h>
#include <event2/util.h>
#include <event2/event.h>

void litex_sim_init(void **out);

struct session_list_s {
  void *session;
  char tickfirst;
  struct ext_module_s *module;
  struct session_list_s *next;
};

uint64_t timebase_ps = 1;
uint64_t sim_time_ps = 0;
struct session_list_s *sesslist=NULL;
struct event_base *base=NULL;

/* A clock: edge k at floor((phase_fs + k * half_fs) / 1000) ps, even edges rising (its level is 0
 * before edge 0). LiteX's clocker has whole picoseconds of half period; fpgatest_dutclk's half periods
 * are whole femtoseconds, so a clock a few ppm off the tester's has the mean frequency asked for to
 * 0.25 ppm at 125 MHz (whole picoseconds would be 250 ppm steps), each edge within 1 ps of its exact
 * time. */
struct clock_s {
  uint8_t *pad;
  uint64_t half_fs;
  uint64_t phase_fs;
  uint64_t k;           /* the next edge */
  uint64_t next_ps;     /* its time */
  int rising_only;
};

#define MAX_CLOCKS 16
static struct clock_s clocks[MAX_CLOCKS];
static int nclocks = 0;

static uint64_t edge_ps(const struct clock_s *c, uint64_t k)
{
  return (c->phase_fs + k * c->half_fs) / 1000;
}

static int add_clock(uint8_t *pad, uint64_t half_fs, uint64_t phase_fs, int rising_only)
{
  struct clock_s *c;
  if(nclocks == MAX_CLOCKS || !pad || half_fs < 1000)
  {
    eprintf("more than %d clocks, a clock without its pad, or a half period under 1 ps\n", MAX_CLOCKS);
    return RC_ERROR;
  }
  c = &clocks[nclocks++];
  c->pad = pad;
  c->half_fs = half_fs;
  c->phase_fs = phase_fs;
  c->k = 0;
  c->next_ps = edge_ps(c, 0);
  c->rising_only = rising_only;
  *pad = 0;
  return RC_OK;
}

static int json_uint(json_object *obj, const char *key, uint64_t *value)
{
  json_object *v = NULL;
  if(!json_object_object_get_ex(obj, key, &v) || json_object_get_int64(v) < 0)
    return -1;
  *value = (uint64_t)json_object_get_int64(v);
  return 0;
}

static void *pad_signal(struct pad_list_s *plist, const char *iface, const char *name)
{
  struct pad_list_s *found = NULL;
  int i;
  if(RC_OK != litex_sim_pads_find(plist, (char *)iface, 0, &found) || !found)
    return NULL;
  for(i = 0; found->pads[i].name; i++)
    if(!strcmp(found->pads[i].name, name))
      return found->pads[i].signal;
  return NULL;
}

/* a "clocker" entry: LiteX's clocker arguments {"freq_hz", "phase_deg"}, and "rising_only" (optional) */
static int add_clocker(struct module_s *m, struct pad_list_s *plist)
{
  json_object *obj = m->args ? json_tokener_parse(m->args) : NULL;
  uint64_t freq = 0, phase = 0, rising_only = 0, period_ps;
  int ret = RC_ERROR;
  if(!obj || json_uint(obj, "freq_hz", &freq) || json_uint(obj, "phase_deg", &phase) || freq == 0 || m->niface != 1)
  {
    eprintf("clocker without one clock, freq_hz and phase_deg: %s\n", m->args ? m->args : "(none)");
    goto out;
  }
  json_uint(obj, "rising_only", &rising_only);
  period_ps = 1000000000000ull / freq;
  if(period_ps < 2 || period_ps % 2)
  {
    eprintf("clocker %s: not an even number of picoseconds per period\n", m->args);
    goto out;
  }
  ret = add_clock(pad_signal(plist, m->iface[0].name, m->iface[0].name), period_ps / 2 * 1000,
                  period_ps * phase / 360 % (period_ps / 2) * 1000, rising_only != 0);
out:
  json_object_put(obj);
  return ret;
}

/* the "fpgatest_dutclk" entry: the device model's two clocks (pads dutclk.ab and dutclk.ba), and
 * dutclk.own held at 1, which clocks the model from them instead of from the tester clock;
 * args {"ab_half_fs", "ab_phase_fs", "ba_half_fs", "ba_phase_fs"} */
static int add_dut_clocks(struct module_s *m, struct pad_list_s *plist)
{
  json_object *obj = m->args ? json_tokener_parse(m->args) : NULL;
  uint64_t v[4];
  uint8_t *own = pad_signal(plist, "dutclk", "own");
  int ret = RC_ERROR;
  if(!obj || json_uint(obj, "ab_half_fs", &v[0]) || json_uint(obj, "ab_phase_fs", &v[1])
     || json_uint(obj, "ba_half_fs", &v[2]) || json_uint(obj, "ba_phase_fs", &v[3]) || !own)
  {
    eprintf("fpgatest_dutclk: bad args or no dutclk pads: %s\n", m->args ? m->args : "(none)");
    goto out;
  }
  printf("[fpgatest_dutclk] half periods %llu / %llu fs\n", (unsigned long long)v[0], (unsigned long long)v[2]);
  *own = 1;
  if(RC_OK == add_clock(pad_signal(plist, "dutclk", "ab"), v[0], v[1], 0))
    ret = add_clock(pad_signal(plist, "dutclk", "ba"), v[2], v[3], 0);
out:
  json_object_put(obj);
  return ret;
}

/* The next step's time after now, every clock pad set to its level then. */
static uint64_t step_clocks(void)
{
  uint64_t next = UINT64_MAX;
  int i;
  for(i = 0; i < nclocks; i++)
    if(!(clocks[i].rising_only && clocks[i].k % 2))
      next = next < clocks[i].next_ps ? next : clocks[i].next_ps;
  /* a deferred fall that no step would come between it and the next rise: a step of its own */
  for(i = 0; i < nclocks; i++)
    if(clocks[i].rising_only && clocks[i].k % 2 && next >= edge_ps(&clocks[i], clocks[i].k + 1))
      next = next < clocks[i].next_ps ? next : clocks[i].next_ps;
  for(i = 0; i < nclocks; i++)
  {
    struct clock_s *c = &clocks[i];
    while(c->next_ps <= next)
    {
      *c->pad = !(c->k % 2);
      c->k++;
      c->next_ps = edge_ps(c, c->k);
    }
  }
  return next;
}

static int litex_sim_initialize_all(void **sim, void *base)
{
  struct module_s *ml=NULL;
  struct module_s *mli=NULL;
  struct ext_module_list_s *mlist=NULL;
  struct ext_module_list_s *pmlist=NULL;
  //struct ext_module_list_s *mlisti=NULL;
  struct pad_list_s *plist=NULL;
  struct pad_list_s *pplist=NULL;
  struct session_list_s *slist=NULL;
  void *vsim=NULL;
  int i;
  int ret = RC_OK;

  /* Load external modules */
  ret = litex_sim_load_ext_modules(&mlist);
  if(RC_OK != ret)
  {
    goto out;
  }
  for(pmlist = mlist; pmlist; pmlist=pmlist->next)
  {
    if(pmlist->module->start)
    {
      pmlist->module->start(base);
    }
  }

  /* Load configuration */
  ret = litex_sim_file_parse("sim_config.js", &ml, &timebase_ps);
  if(RC_OK != ret)
  {
    goto out;
  }
  /* Init generated */
  litex_sim_init(&vsim);

  /* Get pads from generated */
  ret = litex_sim_pads_get_list(&plist);
  if(RC_OK != ret)
  {
    goto out;
  }

  for(mli = ml; mli; mli=mli->next)
  {
    /* the clocks are this loop's own (step_clocks) */
    if(!strcmp(mli->name, "clocker") || !strcmp(mli->name, "fpgatest_dutclk"))
    {
      ret = !strcmp(mli->name, "clocker") ? add_clocker(mli, plist) : add_dut_clocks(mli, plist);
      if(RC_OK != ret)
        goto out;
      continue;
    }

    /* Find the module in the external module */
    pmlist = NULL;
    ret = litex_sim_find_ext_module(mlist, mli->name, &pmlist );
    if(RC_OK != ret)
    {
      goto out;
    }
    if(NULL == pmlist)
    {
      eprintf("Could not find module %s\n", mli->name);
      continue;
    }

    slist=(struct session_list_s *)malloc(sizeof(struct session_list_s));
    if(NULL == slist)
    {
      ret = RC_NOENMEM;
      goto out;
    }
    memset(slist, 0, sizeof(struct session_list_s));

    slist->tickfirst = mli->tickfirst;
    slist->module = pmlist->module;
    slist->next = sesslist;
    ret = pmlist->module->new_sess(&slist->session, mli->args);
    if(RC_OK != ret)
    {
      goto out;
    }
    sesslist = slist;

    /* For each interface */
    for(i = 0; i < mli->niface; i++)
    {
      /*Find the pads */
      pplist=NULL;
      ret = litex_sim_pads_find(plist, mli->iface[i].name, mli->iface[i].index, &pplist);
      if(RC_OK != ret)
      {
	goto out;
      }
      if(NULL == pplist)
      {
	eprintf("Could not find interface %s with index %d\n", mli->iface[i].name, mli->iface[i].index);
	continue;
      }
      ret = pmlist->module->add_pads(slist->session, pplist);
      if(RC_OK != ret)
      {
	goto out;
      }
    }
  }
  *sim = vsim;
out:
  return ret;
}

int litex_sim_sort_session()
{
  struct session_list_s *s;
  struct session_list_s *sprev=sesslist;

  if(!sesslist->next)
  {
    return RC_OK;
  }

  for(s = sesslist->next; s; s=s->next)
  {
    if(s->tickfirst)
    {
      sprev->next = s->next;
      s->next = sesslist;
      sesslist=s;
      s=sprev;
      continue;
    }
    sprev = s;
  }

  return RC_OK;
}

struct event *ev;

static void cb(int sock, short which, void *arg)
{
  struct session_list_s *s;
  void *vsim=arg;
  struct timeval tv;
  tv.tv_sec = 0;
  tv.tv_usec = 0;
  int i;

  for(i = 0; i < 1000; i++)
  {
    for(s = sesslist; s; s=s->next)
    {
      if(s->tickfirst)
        s->module->tick(s->session, sim_time_ps);
    }

    litex_sim_eval(vsim, sim_time_ps);

    for(s = sesslist; s; s=s->next)
    {
      if(!s->tickfirst)
        s->module->tick(s->session, sim_time_ps);
    }

    sim_time_ps = nclocks ? step_clocks() : sim_time_ps + timebase_ps;

    if (litex_sim_got_finish()) {
        event_base_loopbreak(base);
        break;
    }
  }

  if (!evtimer_pending(ev, NULL)) {
    event_del(ev);
    evtimer_add(ev, &tv);
  }
}

int main(int argc, char *argv[])
{
  void *vsim=NULL;
  struct timeval tv;

  int ret;

#ifdef _WIN32
  WSADATA wsa_data;
  WSAStartup(0x0201, &wsa_data);
#endif


  base = event_base_new();
  if(!base)
  {
    eprintf("Can't allocate base\n");
    ret=RC_ERROR;
    goto out;
  }

  litex_sim_init_cmdargs(argc, argv);
  if(RC_OK != (ret = litex_sim_initialize_all(&vsim, base)))
  {
    goto out;
  }

  if(RC_OK != (ret = litex_sim_sort_session()))
  {
    goto out;
  }

  tv.tv_sec = 0;
  tv.tv_usec = 0;
  ev = event_new(base, -1, EV_PERSIST, cb, vsim);
  event_add(ev, &tv);
  event_base_dispatch(base);
#if VM_COVERAGE
  litex_sim_coverage_dump();
#endif
out:
  return ret;
}
