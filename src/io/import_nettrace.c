/*
 * import_nettrace - a .NET EventPipe trace as stack sources (see
 * import_nettrace.h for what each source holds).
 *
 * The method events that name the addresses may come after the events
 * whose stacks hold them (the rundown writes every method at the end), so
 * stacks are first interned as paths of raw addresses: a trie of (parent
 * node, kind, value) under a node per thread, where a step is a managed
 * address or a frame already named (Type X, CPU_TIME, ...). The samples
 * point at trie nodes; at the end every node becomes a stack of the
 * source, its addresses named by the methods and modules then known, and
 * the samples go into the source in time order.
 */
#include "io/import_nettrace.h"
#include "io/zipfile.h"
#include "dotnet/clr_events.h"
#include "dotnet/nettrace.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/hash.h"
#include "common/log.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const struct hs_source_info hs_nettrace_sources[HS_NETTRACE__COUNT] = {
    {"gc-alloc", "one sample per GCAllocationTick (about every 100 KB): bytes "
		 "by managed stack and type (default)"},
    {"gc-alloc-sampled", "AllocationSampled events (.NET 10), each weighted by "
			 "the bytes it stands for"},
    {"thread-time", "the SampleProfiler's samples of every thread, in ms: "
		    "CPU_TIME in managed code, UNMANAGED_CODE_TIME outside it"},
    {"events", "every other event with a stack, by event "
	       "(events:PROVIDER/EVENT for one kind)"},
};

#define EVENTS_PREFIX "events:"
#define FRAME_UNMANAGED "UNMANAGED_CODE_TIME"
#define NO_NODE UINT32_MAX

int hs_nettrace_source_index(const char *name, size_t *view)
{
	size_t i;

	*view = HS_NETTRACE_GC_ALLOC;
	if (!name)
		return 0;
	for (i = 0; i < HS_NETTRACE__COUNT; i++)
		if (!strcmp(name, hs_nettrace_sources[i].name)) {
			*view = i;
			return 0;
		}
	if (!strncmp(name, EVENTS_PREFIX, strlen(EVENTS_PREFIX)) &&
	    name[strlen(EVENTS_PREFIX)]) {
		*view = HS_NETTRACE_EVENTS;
		return 0;
	}
	return -ENOENT;
}

/* A step of a path in the trie. */
enum step_kind { STEP_THREAD, STEP_ADDRESS, STEP_FRAME };

struct method {
	uint64_t start, end; /* [start, end) */
	uint32_t frame;	     /* frame id in the source */
	uint64_t order;	     /* later definitions win */
};

struct module {
	uint64_t id;
	char *name; /* owned: "System.Private.CoreLib" */
};

/* A method seen before its module: named once the module is known. */
struct pending_method {
	struct hs_clr_method m; /* owns its strings */
};

struct sample {
	int64_t time;
	double metric, count;
	uint32_t node;
	uint64_t order;
};

struct thread_state {
	uint64_t tid;
	int pending; /* a thread-time sample waits for its length */
	int64_t time;
	uint32_t node;
};

struct importer {
	struct hs_stack_source *out; /* borrowed */
	struct hs_diag *diag;	     /* borrowed */
	size_t view;
	const char *only; /* "PROVIDER/EVENT" for events:, else NULL */
	int matched;	  /* events of @only were seen */
	struct hs_nettrace_header hdr;
	int have_header;
	char *process_name; /* owned, from ProcessInfo */

	/* the trie */
	uint32_t *node_parent;
	uint8_t *node_kind;
	uint64_t *node_value;
	size_t nr_nodes, alloc_parent, alloc_kind, alloc_value;
	uint32_t *slot; /* node id + 1; 0 = empty */
	size_t nr_slots;

	struct method *methods;
	size_t nr_methods, alloc_methods;
	struct module *modules;
	size_t nr_modules, alloc_modules;
	struct pending_method *pending;
	size_t nr_pending, alloc_pending;

	struct thread_state *threads;
	size_t nr_threads, alloc_threads;

	struct sample *samples;
	size_t nr_samples, alloc_samples;

	struct hs_buf name; /* scratch */
	uint64_t order;
};

static int no_memory(struct importer *im)
{
	hs_diag_set(im->diag, 0, "out of memory");
	return -ENOMEM;
}

/* ---- the trie ---- */

static uint64_t step_hash(uint32_t parent, unsigned kind, uint64_t value)
{
	uint64_t k[2] = {(uint64_t)parent << 8 | kind, value};

	return hs_hash_bytes(k, sizeof(k));
}

static int grow_slots(struct importer *im)
{
	size_t n = im->nr_slots ? im->nr_slots * 2 : 1024, i;
	uint32_t *slot = hs_calloc(n, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < im->nr_nodes; i++) {
		size_t j =
		    step_hash(im->node_parent[i], im->node_kind[i], im->node_value[i]) &
		    (n - 1);

		while (slot[j])
			j = (j + 1) & (n - 1);
		slot[j] = (uint32_t)i + 1;
	}
	hs_free(im->slot);
	im->slot = slot;
	im->nr_slots = n;
	return 0;
}

/* The node of step (@kind, @value) under @parent, made if new. */
static int step(struct importer *im, uint32_t parent, unsigned kind, uint64_t value,
		uint32_t *node)
{
	size_t j;

	if (2 * (im->nr_nodes + 1) > im->nr_slots && grow_slots(im))
		return -ENOMEM;
	for (j = step_hash(parent, kind, value) & (im->nr_slots - 1); im->slot[j];
	     j = (j + 1) & (im->nr_slots - 1)) {
		uint32_t n = im->slot[j] - 1;

		if (im->node_parent[n] == parent && im->node_kind[n] == kind &&
		    im->node_value[n] == value) {
			*node = n;
			return 0;
		}
	}
	if (im->nr_nodes >= UINT32_MAX - 1)
		return -E2BIG;
	if (HS_GROW(im->node_parent, im->nr_nodes + 1, im->alloc_parent) ||
	    HS_GROW(im->node_kind, im->nr_nodes + 1, im->alloc_kind) ||
	    HS_GROW(im->node_value, im->nr_nodes + 1, im->alloc_value))
		return -ENOMEM;
	im->node_parent[im->nr_nodes] = parent;
	im->node_kind[im->nr_nodes] = (uint8_t)kind;
	im->node_value[im->nr_nodes] = value;
	im->slot[j] = (uint32_t)im->nr_nodes + 1;
	*node = (uint32_t)im->nr_nodes++;
	return 0;
}

/* The node of @ev's thread and managed stack (root first). */
static int event_node(struct importer *im, const struct hs_nettrace_event *ev,
		      uint32_t *node)
{
	uint32_t n;
	uint32_t i;
	int err = step(im, NO_NODE, STEP_THREAD, ev->thread_id, &n);

	for (i = ev->stack_depth; i-- > 0 && !err;)
		err = step(im, n, STEP_ADDRESS, ev->stack[i], &n);
	*node = n;
	return err;
}

/* Add a named frame below @node. */
static int frame_step(struct importer *im, uint32_t node, const char *name, uint32_t *out)
{
	uint32_t frame;
	int err = hs_source_intern_frame(im->out, name, strlen(name), &frame);

	return err ? err : step(im, node, STEP_FRAME, frame, out);
}

static int add_sample(struct importer *im, int64_t time, double metric, double count,
		      uint32_t node)
{
	struct sample *s;

	if (HS_GROW(im->samples, im->nr_samples + 1, im->alloc_samples))
		return -ENOMEM;
	s = &im->samples[im->nr_samples++];
	s->time = time;
	s->metric = metric;
	s->count = count;
	s->node = node;
	s->order = im->order++;
	return 0;
}

static int64_t event_time(const struct importer *im, int64_t timestamp)
{
	double ns =
	    (double)(timestamp - im->hdr.sync_qpc) * 1e9 / (double)im->hdr.qpc_freq;

	return (int64_t)ns;
}

/* ---- names: modules and methods ---- */

static const char *module_name(const struct importer *im, uint64_t id)
{
	size_t i;

	for (i = im->nr_modules; i-- > 0;)
		if (im->modules[i].id == id)
			return im->modules[i].name;
	return NULL;
}

static int add_method(struct importer *im, const struct hs_clr_method *m,
		      const char *assembly)
{
	char *name = hs_clr_method_frame(m, assembly);
	struct method *me;
	uint32_t frame;
	int err;

	if (!name)
		return -ENOMEM;
	err = hs_source_intern_frame(im->out, name, strlen(name), &frame);
	hs_free(name);
	if (err)
		return err;
	if (HS_GROW(im->methods, im->nr_methods + 1, im->alloc_methods))
		return -ENOMEM;
	me = &im->methods[im->nr_methods++];
	me->start = m->start;
	me->end = m->start + m->size;
	me->frame = frame;
	me->order = im->order++;
	return 0;
}

static int on_method(struct importer *im, const struct hs_nettrace_event *ev)
{
	struct hs_clr_method m;
	const char *assembly;
	int err = hs_clr_method(ev, &m);

	if (err)
		return err == -ENOMEM ? err : 0; /* a bad one names nothing */
	if (!m.size) {
		hs_clr_method_release(&m);
		return 0;
	}
	assembly = module_name(im, m.module_id);
	if (assembly) {
		err = add_method(im, &m, assembly);
		hs_clr_method_release(&m);
		return err;
	}
	/* its module may come later (rundown order): keep it until the end */
	if (HS_GROW(im->pending, im->nr_pending + 1, im->alloc_pending)) {
		hs_clr_method_release(&m);
		return -ENOMEM;
	}
	im->pending[im->nr_pending++].m = m;
	return 0;
}

static int on_module(struct importer *im, const struct hs_nettrace_event *ev)
{
	struct hs_clr_module m;
	char *name;
	int err = hs_clr_module(ev, &m);

	if (err)
		return err == -ENOMEM ? err : 0;
	name = hs_clr_module_name(m.il_path[0] ? m.il_path : m.native_path);
	if (name && module_name(im, m.module_id) &&
	    !strcmp(module_name(im, m.module_id), name)) {
		hs_free(name);
		hs_clr_module_release(&m);
		return 0;
	}
	if (!name || HS_GROW(im->modules, im->nr_modules + 1, im->alloc_modules)) {
		hs_free(name);
		hs_clr_module_release(&m);
		return -ENOMEM;
	}
	im->modules[im->nr_modules].id = m.module_id;
	im->modules[im->nr_modules++].name = name;
	hs_clr_module_release(&m);
	return 0;
}

/* Microsoft-DotNETCore-EventPipe's ProcessInfo: the command line names the process. */
static int on_process_info(struct importer *im, const struct hs_nettrace_event *ev)
{
	const unsigned char *p = ev->payload;
	char *cmd = NULL, *end;
	const char *base, *s;
	int err = hs_nettrace_utf16(&p, ev->payload + ev->payload_size, &cmd);

	if (err)
		return err == -ENOMEM ? err : 0;
	end = cmd;
	while (*end && *end != ' ')
		end++;
	*end = '\0';
	for (base = s = cmd; *s; s++)
		if (*s == '/' || *s == '\\')
			base = s + 1;
	if (*base) {
		hs_free(im->process_name);
		im->process_name = hs_strdup(base);
		if (!im->process_name)
			err = -ENOMEM;
	}
	hs_free(cmd);
	return err;
}

/* ---- the views ---- */

static int alloc_leaf(struct importer *im, uint32_t node, const char *type, uint32_t kind,
		      uint32_t *out)
{
	int err;

	hs_buf_reset(&im->name);
	if (hs_buf_adds(&im->name, "Type ") || hs_buf_adds(&im->name, type))
		return -ENOMEM;
	err = frame_step(im, node, im->name.s, &node);
	if (!err && kind == HS_CLR_ALLOC_LARGE)
		err = frame_step(im, node, "LargeObject", &node);
	else if (!err && kind == HS_CLR_ALLOC_PINNED)
		err = frame_step(im, node, "PinnedObject", &node);
	*out = node;
	return err;
}

static int on_alloc_tick(struct importer *im, const struct hs_nettrace_event *ev)
{
	struct hs_clr_alloc_tick t;
	uint32_t node;
	int err = hs_clr_alloc_tick(ev, im->hdr.pointer_size, &t);

	if (err)
		return err == -ENOMEM ? err : 0;
	err = event_node(im, ev, &node);
	if (!err)
		err = alloc_leaf(im, node, t.type_name, t.kind, &node);
	if (!err)
		err = add_sample(im, event_time(im, ev->timestamp),
				 (double)(t.amount64 ? t.amount64 : t.amount), 1, node);
	hs_clr_alloc_tick_release(&t);
	return err;
}

static int on_alloc_sampled(struct importer *im, const struct hs_nettrace_event *ev)
{
	struct hs_clr_alloc_sampled s;
	uint32_t node;
	double weight;
	int err = hs_clr_alloc_sampled(ev, im->hdr.pointer_size, &s);

	if (err)
		return err == -ENOMEM ? err : 0;
	weight = hs_clr_alloc_sampled_weight(s.object_size);
	err = event_node(im, ev, &node);
	if (!err)
		err = alloc_leaf(im, node, s.type_name, s.kind, &node);
	if (!err && s.object_size)
		err = add_sample(im, event_time(im, ev->timestamp), weight,
				 weight / (double)s.object_size, node);
	hs_clr_alloc_sampled_release(&s);
	return err;
}

static struct thread_state *thread_state(struct importer *im, uint64_t tid)
{
	size_t i;

	for (i = 0; i < im->nr_threads; i++)
		if (im->threads[i].tid == tid)
			return &im->threads[i];
	if (HS_GROW(im->threads, im->nr_threads + 1, im->alloc_threads))
		return NULL;
	memset(&im->threads[im->nr_threads], 0, sizeof(*im->threads));
	im->threads[im->nr_threads].tid = tid;
	return &im->threads[im->nr_threads++];
}

static double sampling_ms(const struct importer *im)
{
	return im->hdr.sampling_ns ? im->hdr.sampling_ns / 1e6 : 1.0;
}

static int on_thread_sample(struct importer *im, const struct hs_nettrace_event *ev)
{
	struct thread_state *ts;
	uint32_t type, node;
	int64_t now = event_time(im, ev->timestamp);
	int err;

	if (hs_clr_thread_sample(ev, &type))
		return 0;
	ts = thread_state(im, ev->thread_id);
	if (!ts)
		return -ENOMEM;
	if (ts->pending) {
		err =
		    add_sample(im, ts->time, (double)(now - ts->time) / 1e6, 1, ts->node);
		if (err)
			return err;
		ts->pending = 0;
	}
	err = event_node(im, ev, &node);
	if (!err)
		err = frame_step(im, node,
				 type == HS_CLR_SAMPLE_MANAGED ? HS_FRAME_CPU_TIME
							       : FRAME_UNMANAGED,
				 &node);
	if (err)
		return err;
	ts->pending = 1;
	ts->time = now;
	ts->node = node;
	return 0;
}

/* Append "PROVIDER/EVENT" of @ev to im->name. */
static int add_event_name(struct importer *im, const struct hs_nettrace_event *ev)
{
	const struct hs_nettrace_meta *m = ev->meta;
	const char *name = m->event_name;

	if (!*name && !strcmp(m->provider, HS_CLR_PROVIDER))
		name = hs_clr_event_name(m->event_id);
	if (hs_buf_adds(&im->name, m->provider) || hs_buf_addc(&im->name, '/'))
		return -ENOMEM;
	if (name && *name)
		return hs_buf_adds(&im->name, name);
	return hs_buf_addf(&im->name, "EventID(%" PRIu32 ")", m->event_id);
}

static int on_any_stack(struct importer *im, const struct hs_nettrace_event *ev)
{
	static const char prefix[] = "Event ";
	uint32_t node;
	int err;

	if (!ev->stack_depth)
		return 0;
	hs_buf_reset(&im->name);
	if (hs_buf_adds(&im->name, prefix) || add_event_name(im, ev))
		return -ENOMEM;
	if (im->only && strcmp(im->only, im->name.s + sizeof(prefix) - 1))
		return 0;
	im->matched = 1;
	err = event_node(im, ev, &node);
	if (!err)
		err = frame_step(im, node, im->name.s, &node);
	return err ? err : add_sample(im, event_time(im, ev->timestamp), 1, 1, node);
}

static int on_header(void *ctx, const struct hs_nettrace_header *h)
{
	struct importer *im = ctx;

	im->hdr = *h;
	im->have_header = 1;
	return 0;
}

static int on_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct importer *im = ctx;
	const struct hs_nettrace_meta *m = ev->meta;
	int runtime = !strcmp(m->provider, HS_CLR_PROVIDER);
	int rundown = !runtime && !strcmp(m->provider, HS_CLR_RUNDOWN_PROVIDER);

	if ((runtime || rundown) && (m->event_id == HS_CLR_METHOD_LOAD_VERBOSE ||
				     m->event_id == HS_CLR_METHOD_UNLOAD_VERBOSE))
		return on_method(im, ev);
	if ((runtime && (m->event_id == HS_CLR_MODULE_LOAD ||
			 m->event_id == HS_CLR_MODULE_UNLOAD)) ||
	    (rundown && (m->event_id == HS_CLR_RUNDOWN_MODULE_DC_START ||
			 m->event_id == HS_CLR_RUNDOWN_MODULE_DC_END)))
		return on_module(im, ev);
	if (!strcmp(m->provider, "Microsoft-DotNETCore-EventPipe") && m->event_id == 1)
		return on_process_info(im, ev);
	switch (im->view) {
	case HS_NETTRACE_GC_ALLOC:
		return runtime && m->event_id == HS_CLR_GC_ALLOCATION_TICK
			   ? on_alloc_tick(im, ev)
			   : 0;
	case HS_NETTRACE_GC_ALLOC_SAMPLED:
		return runtime && m->event_id == HS_CLR_ALLOCATION_SAMPLED
			   ? on_alloc_sampled(im, ev)
			   : 0;
	case HS_NETTRACE_THREAD_TIME:
		return !strcmp(m->provider, HS_CLR_SAMPLE_PROFILER)
			   ? on_thread_sample(im, ev)
			   : 0;
	default:
		if (!strcmp(m->provider, HS_CLR_SAMPLE_PROFILER) ||
		    (runtime && (m->event_id == HS_CLR_GC_ALLOCATION_TICK ||
				 m->event_id == HS_CLR_ALLOCATION_SAMPLED)))
			return 0; /* they have views of their own */
		return on_any_stack(im, ev);
	}
}

/* ---- the end: name the addresses, build the stacks ---- */

static int cmp_method(const void *a, const void *b)
{
	const struct method *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The frame of the method holding @ip, or HS_NO_FRAME. */
static uint32_t find_method(const struct importer *im, uint64_t ip)
{
	size_t lo = 0, hi = im->nr_methods;

	/* the last method starting at or below @ip (the latest definition of a start) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->methods[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip < im->methods[lo - 1].end ? im->methods[lo - 1].frame
						  : HS_NO_FRAME;
}

static int address_frame(struct importer *im, uint64_t ip, uint32_t *frame)
{
	char name[32];
	int n;

	*frame = find_method(im, ip);
	if (*frame == HS_NO_FRAME && ip) /* a return address just past its method's end */
		*frame = find_method(im, ip - 1);
	if (*frame != HS_NO_FRAME)
		return 0;
	n = snprintf(name, sizeof(name), "?!0x%" PRIx64, ip);
	return hs_source_intern_frame(im->out, name, (size_t)n, frame);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int finish(struct importer *im)
{
	uint32_t *node_stack = NULL, process_stack, frame;
	size_t i;
	int err = 0;

	for (i = 0; i < im->nr_threads && !err; i++)
		if (im->threads[i].pending)
			err = add_sample(im, im->threads[i].time, sampling_ms(im), 1,
					 im->threads[i].node);
	for (i = 0; i < im->nr_pending && !err; i++)
		err = add_method(im, &im->pending[i].m,
				 module_name(im, im->pending[i].m.module_id));
	if (err)
		return err;
	if (im->nr_methods > 1)
		qsort(im->methods, im->nr_methods, sizeof(*im->methods), cmp_method);

	hs_buf_reset(&im->name);
	if (im->process_name
		? hs_buf_addf(&im->name, "Process %s (%" PRIu32 ")", im->process_name,
			      im->hdr.pid)
		: hs_buf_addf(&im->name, "Process (%" PRIu32 ")", im->hdr.pid))
		return -ENOMEM;
	err = hs_source_intern_frame(im->out, im->name.s, im->name.len, &frame);
	if (!err)
		err = hs_source_intern_stack(im->out, frame, HS_NO_STACK, &process_stack);
	if (err)
		return err;
	node_stack = hs_malloc((im->nr_nodes + 1) * sizeof(*node_stack));
	if (!node_stack)
		return -ENOMEM;
	/* a node's parent was made before it, so its stack is known already */
	for (i = 0; i < im->nr_nodes && !err; i++) {
		uint64_t value = im->node_value[i];
		uint32_t caller = im->node_parent[i] == NO_NODE
				      ? process_stack
				      : node_stack[im->node_parent[i]];

		switch (im->node_kind[i]) {
		case STEP_THREAD:
			hs_buf_reset(&im->name);
			err = hs_buf_addf(&im->name, "Thread (%" PRIu64 ")", value);
			if (!err)
				err = hs_source_intern_frame(im->out, im->name.s,
							     im->name.len, &frame);
			break;
		case STEP_ADDRESS:
			err = address_frame(im, value, &frame);
			break;
		default:
			frame = (uint32_t)value;
			break;
		}
		if (!err)
			err = hs_source_intern_stack(im->out, frame, caller,
						     &node_stack[i]);
	}
	if (im->nr_samples > 1)
		qsort(im->samples, im->nr_samples, sizeof(*im->samples), cmp_sample);
	if (!err)
		err = hs_source_reserve_samples(im->out, im->nr_samples);
	for (i = 0; i < im->nr_samples && !err; i++)
		err = hs_source_add_sample(im->out, im->samples[i].time,
					   im->samples[i].metric, im->samples[i].count,
					   node_stack[im->samples[i].node]);
	hs_free(node_stack);
	if (err)
		return err;
	im->out->kind =
	    im->view == HS_NETTRACE_THREAD_TIME ? HS_METRIC_TIME : HS_METRIC_PLAIN;
	hs_free(im->out->metric_unit);
	im->out->metric_unit = hs_strdup(im->view == HS_NETTRACE_THREAD_TIME ? "ms"
					 : im->view == HS_NETTRACE_EVENTS    ? "events"
									     : "bytes");
	return im->out->metric_unit ? 0 : -ENOMEM;
}

static void importer_release(struct importer *im)
{
	size_t i;

	hs_free(im->process_name);
	hs_free(im->node_parent);
	hs_free(im->node_kind);
	hs_free(im->node_value);
	hs_free(im->slot);
	hs_free(im->methods);
	for (i = 0; i < im->nr_modules; i++)
		hs_free(im->modules[i].name);
	hs_free(im->modules);
	for (i = 0; i < im->nr_pending; i++)
		hs_clr_method_release(&im->pending[i].m);
	hs_free(im->pending);
	hs_free(im->threads);
	hs_free(im->samples);
	hs_buf_release(&im->name);
}

int hs_import_nettrace(FILE *f, size_t view, const char *source,
		       struct hs_stack_source *out, struct hs_diag *diag)
{
	struct hs_nettrace_ops ops = {.header = on_header, .event = on_event};
	struct hs_nettrace_stats st;
	struct importer im;
	int err;

	memset(&im, 0, sizeof(im));
	hs_buf_init(&im.name);
	im.out = out;
	im.diag = diag;
	im.view = view < HS_NETTRACE__COUNT ? view : HS_NETTRACE_GC_ALLOC;
	if (im.view == HS_NETTRACE_EVENTS && source &&
	    !strncmp(source, EVENTS_PREFIX, strlen(EVENTS_PREFIX)))
		im.only = source + strlen(EVENTS_PREFIX);
	ops.ctx = &im;
	err = hs_nettrace_read(f, &ops, &st, diag);
	if (!err && !im.have_header) {
		hs_diag_set_offset(diag, st.bytes,
				   "the trace ends before its Trace object");
		err = -EINVAL;
	}
	if (!err && st.truncated)
		pr_warn("%s: cut off at offset %" PRIu64
			" (inside the object at offset %" PRIu64 "); keeping the %" PRIu64
			" events before it",
			diag && diag->file ? diag->file : "nettrace", st.truncated_at,
			st.truncated_object, st.nr_events);
	if (!err && st.nr_lost)
		pr_warn("%s: the runtime dropped %" PRIu64
			" event%s (its buffers were full); "
			"the sources miss them",
			diag && diag->file ? diag->file : "nettrace", st.nr_lost,
			st.nr_lost == 1 ? "" : "s");
	if (!err && im.only && !im.matched) {
		hs_diag_set(diag, 0, "the trace has no stacks of event '%s'", im.only);
		err = -ENOENT;
	}
	if (!err)
		err = finish(&im);
	if (err == -ENOMEM)
		no_memory(&im);
	else if (err == -E2BIG && diag && !diag->set)
		hs_diag_set(diag, 0, "too many frames or stacks");
	importer_release(&im);
	return err;
}

int hs_import_nettrace_zip(const char *path, size_t view, const char *source,
			   struct hs_stack_source *out, struct hs_diag *diag)
{
	char *entry = NULL;
	FILE *zf = hs_zip_open_entry(path, ".nettrace", &entry, diag);
	int err;

	if (!zf)
		return -EINVAL;
	err = hs_import_nettrace(zf, view, source, out, diag);
	fclose(zf);
	hs_free(entry);
	return err;
}

/* ---- which sources a file offers ---- */

struct scan {
	int has[HS_NETTRACE__COUNT];
};

static int scan_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct scan *sc = ctx;
	const struct hs_nettrace_meta *m = ev->meta;
	int runtime = !strcmp(m->provider, HS_CLR_PROVIDER);

	if (runtime && m->event_id == HS_CLR_GC_ALLOCATION_TICK)
		sc->has[HS_NETTRACE_GC_ALLOC] = 1;
	else if (runtime && m->event_id == HS_CLR_ALLOCATION_SAMPLED)
		sc->has[HS_NETTRACE_GC_ALLOC_SAMPLED] = 1;
	else if (!strcmp(m->provider, HS_CLR_SAMPLE_PROFILER))
		sc->has[HS_NETTRACE_THREAD_TIME] = 1;
	else if (ev->stack_depth)
		sc->has[HS_NETTRACE_EVENTS] = 1;
	return 0;
}

size_t hs_nettrace_path_sources(const char *path, int zipped, struct hs_source_info *out)
{
	struct scan sc;
	struct hs_nettrace_ops ops = {.ctx = &sc, .event = scan_event};
	struct hs_diag diag = HS_DIAG_INIT(path);
	FILE *f = zipped ? hs_zip_open_entry(path, ".nettrace", NULL, &diag)
			 : fopen(path, "rb");
	size_t i, n = 0;

	memset(&sc, 0, sizeof(sc));
	if (!f || hs_nettrace_read(f, &ops, NULL, &diag) < 0)
		for (i = 0; i < HS_NETTRACE__COUNT; i++)
			sc.has[i] = 1;
	if (f)
		fclose(f);
	sc.has[HS_NETTRACE_GC_ALLOC] = 1; /* the default, even when empty */
	for (i = 0; i < HS_NETTRACE__COUNT && n < HS_SOURCES_MAX; i++)
		if (sc.has[i])
			out[n++] = hs_nettrace_sources[i];
	return n;
}
