/* assets.h - the HTML report's page, stylesheet, script and the npm
 * libraries it inlines, embedded into the binary by the Makefile (rule for
 * $(BUILD)/gen/report/html_assets.c; xxd -i). Each array holds the file's
 * bytes followed by a NUL; the _len variable excludes the NUL. */
#ifndef OBJSCOPE_REPORT_HTML_ASSETS_H
#define OBJSCOPE_REPORT_HTML_ASSETS_H

#include <stddef.h>

extern const unsigned char os_html_page_html[];       /* report/html/page.html */
extern const size_t os_html_page_html_len;
extern const unsigned char os_html_style_css[];       /* report/html/style.css */
extern const size_t os_html_style_css_len;
extern const unsigned char os_html_app_js[];          /* report/html/app.js */
extern const size_t os_html_app_js_len;
extern const unsigned char os_html_d3_min_js[];       /* npm d3 (dist/d3.min.js) */
extern const size_t os_html_d3_min_js_len;
extern const unsigned char os_html_d3_flamegraph_umd_min_js[]; /* npm d3-flame-graph */
extern const size_t os_html_d3_flamegraph_umd_min_js_len;

#endif
