/* Copyright (C) 2017 LambdaConcept */
/* SPDX-License-Identifier: BSD-2-Clause
 * The twin's copy of LiteX's simulator main (litex/build/sim/core/sim.c), changed in one place: time
 * goes from one clock edge to the next, not in steps of the greatest common divisor of every half
 * period. LiteX's steps are 2 ns for the board's clocks (sys 50 MHz, tester 125 MHz: half periods of 10
 * and 4 ns), and most of them would change no clock; here a step is taken only where a clocker module
 * toggles its clock (12 per 40 ns for those two clocks, where LiteX takes 20). The clocker modules
 * still drive the clock pads from the time they are given, so the levels are LiteX's own. The
 * simulated device's own clocks (fpgatest_dutclk, when it is loaded) are stepped to the same way.
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
#include "dutclk_edges.h"

#include <event2/listener.h>
#include <event2/util.h>
#include <event2/event.h>

void litex_sim_init(void **out);
void litex_sim_dump();

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

/* every clock's edges: LiteX's clockers (phase + k * half period, whole picoseconds, as the clocker
 * computes them) and fpgatest_dutclk's (femtoseconds: sim/twin/modules/fpgatest_dutclk), all as
 * edge k at floor((phase_fs + k * half_fs) / 1000) ps */
#define MAX_CLOCKS 16
static struct dutclk_s clocks[MAX_CLOCKS];
static int nclocks = 0;

static int add_clock(const char *args)
{
  json_object *obj = json_tokener_parse(args);
  json_object *freq = NULL, *phase = NULL;
  uint64_t period_ps, half_ps;
  int ret = RC_ERROR;
  if(!obj || !json_object_object_get_ex(obj, "freq_hz", &freq) || !json_object_object_get_ex(obj, "phase_deg", &phase)
     || json_object_get_int64(freq) <= 0)
  {
    eprintf("clocker without freq_hz and phase_deg: %s\n", args);
    goto out;
  }
  period_ps = 1000000000000ull / json_object_get_int64(freq);
  if(nclocks == MAX_CLOCKS || period_ps < 2 || period_ps % 2)
  {
    eprintf("clocker %s: more than %d clocks, or not an even number of picoseconds per period\n", args, MAX_CLOCKS);
    goto out;
  }
  half_ps = period_ps / 2;
  clocks[nclocks].half_fs = half_ps * 1000;
  clocks[nclocks].phase_fs = period_ps * json_object_get_int64(phase) / 360 % half_ps * 1000;
  nclocks++;
  ret = RC_OK;
out:
  json_object_put(obj);
  return ret;
}

/* fpgatest_dutclk's two clocks */
static int add_dut_clocks(const char *args)
{
  if(nclocks + 2 > MAX_CLOCKS || dutclk_parse(args, &clocks[nclocks]) != 0)
  {
    eprintf("fpgatest_dutclk: more than %d clocks, or bad args: %s\n", MAX_CLOCKS, args);
    return RC_ERROR;
  }
  nclocks += 2;
  return RC_OK;
}

/* the first time after now at which a clock toggles */
static uint64_t next_edge_ps(uint64_t now)
{
  uint64_t next = UINT64_MAX;
  int i;
  for(i = 0; i < nclocks; i++)
  {
    uint64_t edge = dutclk_next(&clocks[i], now);
    if(edge < next)
      next = edge;
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

    if(!strcmp(mli->name, "clocker") && RC_OK != (ret = add_clock(mli->args)))
    {
      goto out;
    }
    if(!strcmp(mli->name, "fpgatest_dutclk") && RC_OK != (ret = add_dut_clocks(mli->args)))
    {
      goto out;
    }

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
    litex_sim_dump();

    for(s = sesslist; s; s=s->next)
    {
      if(!s->tickfirst)
        s->module->tick(s->session, sim_time_ps);
    }

    sim_time_ps = nclocks ? next_edge_ps(sim_time_ps) : sim_time_ps + timebase_ps;

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
