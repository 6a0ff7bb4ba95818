/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What `status` answers, text and JSON (status-reply.c). */

#include <stdio.h>

struct manager;

int status_render_text(const struct manager *m, FILE *f);
int status_render_json(const struct manager *m, FILE *f);
