/* diescope's C API: what the Python module (python/diescope) loads through ctypes, from
 * libdiescope-c.so. Plain C types only, so that any Python 3 (or any language with a C FFI) can load
 * it without a compiler or Python headers (docs/python.md#why-a-c-api-and-ctypes).
 *
 * Conventions:
 *  - Nested results (a report, a table's column list) are JSON text in a string the caller frees
 *    with ds_free_string().
 *  - Samples are plain arrays of doubles or int64s that the caller allocates and this library fills.
 *  - A call that fails returns NULL (or a negative number) and leaves the error in
 *    ds_last_error_json() for this thread: {"kind", "cause", "fix", "exit_code"}, the same cause, fix
 *    and exit code the command line prints for the same failure.
 *  - Handles are opaque; each has its own free function. */
#ifndef DIESCOPE_CAPI_DIESCOPE_C_H
#define DIESCOPE_CAPI_DIESCOPE_C_H

#include <stdint.h>

/* Only these functions are exported from the library. */
#if defined(__GNUC__)
#define DS_API __attribute__((visibility("default")))
#else
#define DS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API: bumped when a function changes. The Python module refuses another. */
DS_API int ds_api_version(void);
/* JSON {"tool": version, "method": method version, "schema": report schema}. */
DS_API char* ds_versions_json(void);

/* The last failure of this thread as JSON, or NULL when none. Valid until the next call here. */
DS_API const char* ds_last_error_json(void);
DS_API void ds_free_string(char* text);

/* ---- reading ------------------------------------------------------------------------------------ */

/* The report of a recording as JSON: the same document `diescope report PATH` writes as report.json
 * (analysed with the steady window when use_window is non-zero, the calibration found as `report`
 * finds it, or the file or folder `calibration` names when it is not NULL or empty). */
DS_API char* ds_report_of_recording(const char* path, const char* calibration, int use_window);
/* A report.json read as `diescope report report.json` reads it (schema checked). */
DS_API char* ds_load_report(const char* path);

/* A table of columns of one type each: float64, int64 or text (docs/python.md#the-samples-table). */
typedef struct ds_table ds_table;
/* One row per chip sample of the recording, with GPU-Util, clocks, power limit and host probes
 * joined to it (docs/python.md#the-samples-table). */
DS_API ds_table* ds_samples_of_recording(const char* path, int use_window);
DS_API void ds_table_free(ds_table* table);
DS_API int64_t ds_table_rows(const ds_table* table);
/* [{"name": ..., "type": "f8"|"i8"|"text", "unit": ...}, ...] */
DS_API char* ds_table_columns_json(const ds_table* table);
/* Copies column `column` into `out` (rows values). Returns 0, or -1 when the column is not of that
 * type or does not exist. */
DS_API int ds_table_copy_f64(const ds_table* table, int column, double* out);
DS_API int ds_table_copy_i64(const ds_table* table, int column, int64_t* out);
/* A text column as a JSON list of strings. */
DS_API char* ds_table_text_json(const ds_table* table, int column);

/* Figures over each span [starts[i], ends[i]) (ns since the Unix epoch) of a recording, each analysed as
 * the steady window is, on the records within 2 s of it (docs/python.md#steps-and-regions): one row
 * per span. whole_recording non-zero analyses the whole recording for each span instead (slow; the
 * tests hold the two equal). */
DS_API ds_table* ds_spans_of_recording(const char* path, const int64_t* starts, const int64_t* ends,
                                       int64_t count, int whole_recording);

/* ---- measuring (docs/python.md#measure) ---------------------------------------------------------- */

/* `diescope run`'s collector attached to this process: the counter sampler child per GPU, NVML and the
 * host probes, recording into options.output_dir, plus NVML's energy counter. options is JSON:
 * {"gpus": [..] or null, "interval_ms", "drain_ms", "host_interval_ms", "source": "pm"|"gpm"|"auto",
 *  "output_dir", "sampler": path of diescope-cupti}. Returns once the counters sample (as `run` starts
 * its command then), or NULL with the error `run` gives for the same cause. */
typedef struct ds_measure ds_measure;
DS_API ds_measure* ds_measure_start(const char* options_json);
/* A line as the measured command would print it: "diescope: measure start", "... stop", or a window
 * line (docs/method.md#a-window-printed-afterwards). Timed when the collector reads it, as in `run`. */
DS_API int ds_measure_marker(ds_measure* measure, const char* line);
/* Ends the run and returns JSON: {"start_ns", "end_ns", "warnings": [...], "recordings": [{"index",
 * "path", "counters", "chip_source", "counters_why", "samples"}], "energy": [{"index", "ts_ns": [...],
 * "mj": [...], "why"}]}. */
DS_API char* ds_measure_stop(ds_measure* measure);
DS_API void ds_measure_free(ds_measure* measure);
/* Writes each recording's report as `run` does (<recording>.report/report.json and samples.csv) and,
 * with several, the summary of GPUs to gpus_json_path (when not NULL). recordings_json is a JSON list
 * of {"path", "index"}. Returns {"reports": [{"recording", "report_path", "report", "headline"}], "gpus",
 * "gpus_text"}.
 */
DS_API char* ds_report_run(const char* recordings_json, const char* calibration, int use_window,
                           const char* gpus_json_path);

#ifdef __cplusplus
}
#endif

#endif /* DIESCOPE_CAPI_DIESCOPE_C_H */
