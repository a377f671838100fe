/* SPDX-License-Identifier: MIT */
/*
 * The runtime's configuration: where JACCL looks for it, how it parses the
 * device file, and how it decides between a mesh and a ring. Error texts
 * are JACCL's own (without its "[jaccl] " tag) so that a failing
 * verification reads like the failing job would; where JACCL says too
 * little (which cell is missing, which variable to set) we say more.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rt_config.h"
#include "util.h"

#define DEVFILE_MAX (1 << 20)

const struct jc_hf_cell *
rt_config_cell(const struct rt_config *c, int r, int p)
{
	return &c->dev[(size_t)r * (size_t)c->size + (size_t)p];
}

static void
free_cells(struct jc_hf_cell *cells, size_t n)
{
	if (cells == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		strv_free_array(cells[i].names, cells[i].n);
	free(cells);
}

static int
parse_cell(json_t *v, struct jc_hf_cell *cell, int r, int p, struct jc_err *err)
{
	size_t i;
	json_t *e;

	memset(cell, 0, sizeof(*cell));
	if (json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		cell->names = xcalloc(1, sizeof(char *));
		cell->names[0] = xstrdup(json_string_value(v));
		cell->n = 1;
	} else if (json_is_array(v)) {
		cell->is_list = true;
		cell->names = xcalloc(json_array_size(v) + 1, sizeof(char *));
		json_array_foreach(v, i, e) {
			if (!json_is_string(e))
				return jc_fail(err, -EINVAL,
				    "Device names should be null, a string or array of strings.");
			cell->names[cell->n++] = xstrdup(json_string_value(e));
		}
	} else {
		return jc_fail(err, -EINVAL,
		    "Device names should be null, a string or array of strings.");
	}
	for (i = 0; i < cell->n; i++)
		if (!jc_iface_name_ok(cell->names[i]))
			return jc_fail(err, -EINVAL,
			    "rank %d to rank %d: \"%s\" is not a valid device name",
			    r, p, cell->names[i]);
	return 0;
}

int
rt_config_parse_devices(struct rt_config *c, const char *json, size_t len,
    struct jc_err *err)
{
	json_error_t jerr;
	json_t *root, *row;
	struct jc_hf_cell *cells = NULL;
	size_t n, r, p;
	int rc = 0;

	free_cells(c->dev, (size_t)c->size * (size_t)c->size);
	c->dev = NULL;
	c->size = 0;
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return jc_fail(err, -EINVAL, "%s%sline %d: %s",
		    c->devfile ? c->devfile : "", c->devfile ? ": " : "",
		    jerr.line, jerr.text);
	if (!json_is_array(root)) {
		rc = jc_fail(err, -EINVAL, "The device file should start with an array");
		goto out;
	}
	n = json_array_size(root);
	if (n > 64) {
		rc = jc_fail(err, -EINVAL, "The device file has %zu rows; at most 64 are supported", n);
		goto out;
	}
	json_array_foreach(root, r, row)
		if (!json_is_array(row)) {
			rc = jc_fail(err, -EINVAL,
			    "The device file should have an array of arrays");
			goto out;
		}
	json_array_foreach(root, r, row) {
		size_t k = json_array_size(row);

		if (k < n) {
			rc = jc_fail(err, -EINVAL, "The device file should contain the "
			    "connectivity of each rank to all other ranks but rank %zu "
			    "contains only %zu entries.", r, k);
			goto out;
		}
		if (k != n) {
			rc = jc_fail(err, -EINVAL, "The full connectivity matrix should "
			    "be provided but we have %zu rows and row %zu has %zu columns.",
			    n, r, k);
			goto out;
		}
	}
	cells = xcalloc(n * n + 1, sizeof(*cells));
	for (r = 0; r < n && rc == 0; r++)
		for (p = 0; p < n && rc == 0; p++)
			rc = parse_cell(json_array_get(json_array_get(root, r), p),
			    &cells[r * n + p], (int)r, (int)p, err);
	if (rc < 0) {
		free_cells(cells, n * n);
		goto out;
	}
	c->dev = cells;
	c->size = (int)n;
out:
	json_decref(root);
	return rc;
}

int
rt_config_from_values(struct rt_config *c, const char *rank, const char *devfile,
    const char *coordinator, const char *ring, struct jc_err *err)
{
	char *text = NULL;
	size_t len;
	long v;
	int rc;

	memset(c, 0, sizeof(*c));
	c->rank = -1;
	if (rank == NULL || devfile == NULL)
		return jc_fail(err, -EINVAL, "You need to provide via environment "
		    "variables a rank (JACCL_RANK/MLX_RANK), a device file "
		    "(JACCL_IBV_DEVICES/MLX_IBV_DEVICES) and a coordinator ip/port "
		    "(JACCL_COORDINATOR/MLX_JACCL_COORDINATOR).%s%s",
		    rank == NULL ? " The rank is not set." : "",
		    devfile == NULL ? " The device file is not set." : "");
	if (!jc_parse_int(rank, 0, 1 << 20, &v))
		return jc_fail(err, -EINVAL, "the rank \"%s\" is not a number "
		    "(JACCL would read it as %d)", rank, atoi(rank));
	c->rank = (int)v;
	if (coordinator != NULL && *coordinator != '\0')
		c->coordinator = xstrdup(coordinator);
	c->prefer_ring = ring != NULL;
	c->devfile = xstrdup(devfile);
	if ((rc = jc_read_file(devfile, DEVFILE_MAX, &text, &len, err)) < 0)
		return rc;
	rc = rt_config_parse_devices(c, text, len, err);
	free(text);
	return rc;
}

static const char *
env2(const char *a, const char *b)
{
	const char *v = getenv(a);

	return v != NULL ? v : getenv(b);
}

int
rt_config_from_env(struct rt_config *c, struct jc_err *err)
{
	return rt_config_from_values(c, env2("JACCL_RANK", "MLX_RANK"),
	    env2("JACCL_IBV_DEVICES", "MLX_IBV_DEVICES"),
	    env2("JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR"),
	    env2("JACCL_RING", "MLX_JACCL_RING"), err);
}

/* First cell that breaks the mesh rule, as (r, p); false if none. */
static bool
mesh_defect(const struct rt_config *c, int *r, int *p)
{
	for (*r = 0; *r < c->size; (*r)++)
		for (*p = 0; *p < c->size; (*p)++) {
			size_t k = rt_config_cell(c, *r, *p)->n;

			if ((*r == *p) != (k == 0))
				return true;
		}
	return false;
}

bool
rt_config_valid_mesh(const struct rt_config *c)
{
	int r, p;

	return c->size >= 2 && !mesh_defect(c, &r, &p);
}

static bool
ring_defect(const struct rt_config *c, int k, int *r, int *p)
{
	int n = c->size;

	for (*r = 0; *r < n; (*r)++) {
		*p = (*r + n - 1) % n;
		if ((int)rt_config_cell(c, *r, *p)->n != k)
			return true;
		*p = (*r + 1) % n;
		if ((int)rt_config_cell(c, *r, *p)->n != k)
			return true;
	}
	return false;
}

bool
rt_config_valid_ring(const struct rt_config *c, int *k)
{
	int r, p;

	*k = 0;
	if (c->size < 2)
		return false;
	*k = (int)rt_config_cell(c, 0, 1)->n;
	return *k >= 1 && !ring_defect(c, *k, &r, &p);
}

int
rt_config_select(const struct rt_config *c, bool need_coordinator,
    enum rt_kind *kind, int *wires, struct jc_err *err)
{
	bool mesh, ring;
	int k, r, p;

	if (c->dev == NULL || c->size < 1)
		return jc_fail(err, -EINVAL, "no device file was read");
	if (c->rank < 0 || c->rank >= c->size)
		return jc_fail(err, -EINVAL, "rank %d is out of range: the device "
		    "file has %d rows, so ranks are 0 to %d", c->rank, c->size,
		    c->size - 1);
	if (need_coordinator && c->coordinator == NULL)
		return jc_fail(err, -EINVAL, "no coordinator: set JACCL_COORDINATOR "
		    "or MLX_JACCL_COORDINATOR to the ip:port rank 0 listens on, or "
		    "pick another side channel (--side-channel ssh, file=DIR or a "
		    "plugin .so)");
	if (c->size < 2)
		return jc_fail(err, -EINVAL, "The configuration should define a "
		    "valid mesh or a valid ring. (the device file has 1 row: at "
		    "least 2 ranks are needed)");
	mesh = rt_config_valid_mesh(c);
	ring = rt_config_valid_ring(c, &k);
	if (c->prefer_ring && ring)
		*kind = RT_RING;
	else if (mesh)
		*kind = RT_MESH;
	else if (ring)
		*kind = RT_RING;
	else {
		struct jc_buf b = { 0 };

		buf_puts(&b, "The configuration should define a valid mesh or a valid ring.");
		if (mesh_defect(c, &r, &p))
			buf_printf(&b, " Not a mesh: %s from rank %d to rank %d.",
			    r == p ? "a device is listed" : "no device is listed", r, p);
		k = (int)rt_config_cell(c, 0, 1)->n;
		if (k == 0)
			buf_puts(&b, " Not a ring: no device from rank 0 to rank 1.");
		else if (ring_defect(c, k, &r, &p))
			buf_printf(&b, " Not a ring: rank %d lists %zu device(s) for "
			    "rank %d where rank 0 lists %d for rank 1.", r,
			    rt_config_cell(c, r, p)->n, p, k);
		jc_fail(err, -EINVAL, "%s", b.data);
		buf_free(&b);
		return -EINVAL;
	}
	if (*kind == RT_MESH && c->size > RT_MESH_MAX_PEERS)
		return jc_fail(err, -EINVAL, "The JACCL mesh supports up to %d "
		    "peers but %d were provided.", RT_MESH_MAX_PEERS, c->size);
	if (*kind == RT_RING && k > RT_RING_MAX_CONNS)
		return jc_fail(err, -EINVAL, "Up to %d per direction supported but "
		    "%d were provided.", RT_RING_MAX_CONNS, k);
	*wires = *kind == RT_RING ? k : 1;
	return 0;
}

void
rt_config_clear(struct rt_config *c)
{
	if (c == NULL)
		return;
	free_cells(c->dev, (size_t)c->size * (size_t)c->size);
	free(c->coordinator);
	free(c->devfile);
	memset(c, 0, sizeof(*c));
}
