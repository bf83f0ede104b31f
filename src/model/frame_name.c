/*
 * frame_name - split "module!function" frame names (see frame_name.h).
 */
#include "model/frame_name.h"
#include "common/log.h"
#include <string.h>

static const char inline_suffix[] = " (inline)";

/* Does the '!' at @bang (inside @name) belong to "operator!..."? */
static int operator_bang(const char *name, const char *bang)
{
	const char *q = bang;

	while (q > name && q[-1] == ' ')
		q--;
	if (q - name < 8 || memcmp(q - 8, "operator", 8))
		return 0;
	/* "operator" must start a word: not "myoperator!f" */
	q -= 8;
	return q == name ||
	       !(q[-1] == '_' || (q[-1] >= '0' && q[-1] <= '9') ||
		 (q[-1] >= 'a' && q[-1] <= 'z') || (q[-1] >= 'A' && q[-1] <= 'Z'));
}

const char *hs_frame_name_bang(const char *name, size_t len)
{
	size_t depth = 0, i;

	for (i = 0; i < len; i++) {
		switch (name[i]) {
		case '<':
		case '(':
		case '[':
		case '{':
			depth++;
			break;
		case '>':
		case ')':
		case ']':
		case '}':
			if (depth)
				depth--;
			break;
		case '!':
			if (!depth && i > 0 && !operator_bang(name, name + i))
				return name + i;
			break;
		default:
			break;
		}
	}
	return NULL;
}

size_t hs_frame_name_strip_inline(const char *s, size_t len)
{
	size_t k = sizeof(inline_suffix) - 1;

	if (len > k && !memcmp(s + len - k, inline_suffix, k))
		return len - k;
	return len;
}

void hs_frame_name_split(const char *name, size_t len, struct hs_frame_name *out)
{
	const char *bang = hs_frame_name_bang(name, len);
	size_t start = bang ? (size_t)(bang - name) + 1 : 0;

	out->module = bang ? name : NULL;
	out->module_len = bang ? (size_t)(bang - name) : 0;
	out->function = name + start;
	out->function_len = hs_frame_name_strip_inline(name + start, len - start);
	out->inlined = out->function_len != len - start;
	/* module, '!', function and the suffix tile the name */
	HS_BUG_ON(out->module_len + (bang ? 1 : 0) + out->function_len > len);
}

const char *hs_frame_name_short_module(const char *name, size_t len, size_t *mlen)
{
	const char *bang = hs_frame_name_bang(name, len), *p, *start = name;

	*mlen = 0;
	if (!bang)
		return NULL;
	for (p = name; p < bang; p++)
		if (*p == '/' || *p == '\\')
			start = p + 1;
	*mlen = (size_t)(bang - start);
	return start;
}
