/*
 * table_batch.c — kubectl's printers of batch/v1 Jobs and CronJobs for the Table renderer, as
 * upstream's printJob / printCronJob write them: Jobs Name, Status (Complete, Failed,
 * Terminating, Suspended, FailureTarget, else Running — the first that holds, in that order),
 * Completions ("succeeded/completions", "n/1", or "n/1 of parallelism"), Duration (start to
 * completion or to now; empty before the Job starts), Age; CronJobs Name, Schedule, Timezone,
 * Suspend (True / False / <unset>), Active, Last Schedule, Age; both with Containers, Images and
 * Selector at priority 1 (-o wide). Thread-safe: pure functions over const tables.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t int_at(const kc_obj *o, const char *ptr, int64_t dflt)
{
    int64_t v;
    return kc_obj_get_int(o, ptr, &v, NULL) == 0 ? v : dflt;
}

/* A condition of type t with status True (upstream's hasJobCondition). */
static bool has_cond(const json_t *conds, const char *t)
{
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (kc__streq(json_string_value(json_object_get(c, "type")), t) &&
            kc__streq(json_string_value(json_object_get(c, "status")), "True"))
            return true;
    }
    return false;
}

static const char *job_status(const kc_obj *o)
{
    json_t *conds = kc__table_json(o, "/status/conditions");
    const char *st = has_cond(conds, "Complete")        ? "Complete"
                     : has_cond(conds, "Failed")        ? "Failed"
                     : kc_obj_deleting(o)               ? "Terminating"
                     : has_cond(conds, "Suspended")     ? "Suspended"
                     : has_cond(conds, "FailureTarget") ? "FailureTarget"
                                                        : "Running";
    json_decref(conds);
    return st;
}

static json_t *row_job(const kc_obj *o, int64_t now)
{
    char comp[64], dur[32] = "";
    int64_t ok = int_at(o, "/status/succeeded", 0), want = int_at(o, "/spec/completions", -1);
    int64_t par = int_at(o, "/spec/parallelism", 0);
    if (want >= 0)
        snprintf(comp, sizeof comp, "%lld/%lld", (long long)ok, (long long)want);
    else if (par > 1)
        snprintf(comp, sizeof comp, "%lld/1 of %lld", (long long)ok, (long long)par);
    else
        snprintf(comp, sizeof comp, "%lld/1", (long long)ok);
    int64_t start = kc__table_time(o, "/status/startTime"),
            end = kc__table_time(o, "/status/completionTime");
    if (start >= 0)
        kc__human_duration((end >= 0 ? end : now) - start, dur);
    json_t *row =
        json_pack("[s,s,s,s,o]", kc_obj_name(o), job_status(o), comp, dur, kc__table_age(o, now));
    if (row) {
        kc__wide_containers(o, "/spec/template/spec/containers", row);
        kc__wide_label_selector(o, "/spec/selector", row);
    }
    return row;
}

static json_t *row_cronjob(const kc_obj *o, int64_t now)
{
    char *sched = NULL, *tz = NULL, last[32] = "<none>";
    kc_obj_get_string(o, "/spec/schedule", &sched, NULL, NULL);
    kc_obj_get_string(o, "/spec/timeZone", &tz, NULL, NULL);
    bool susp;
    const char *suspend = kc_obj_get_bool(o, "/spec/suspend", &susp, NULL) != 0 ? "<unset>"
                          : susp                                                ? "True"
                                                                                : "False";
    json_t *active = kc__table_json(o, "/status/active");
    int64_t ls = kc__table_time(o, "/status/lastScheduleTime");
    if (ls >= 0)
        kc__human_duration(now - ls, last);
    json_t *row =
        json_pack("[s,s,s,s,I,s,o]", kc_obj_name(o), sched ? sched : "", tz ? tz : "<none>",
                  suspend, (json_int_t)json_array_size(active), last, kc__table_age(o, now));
    free(sched);
    free(tz);
    json_decref(active);
    if (row) {
        kc__wide_containers(o, "/spec/jobTemplate/spec/template/spec/containers", row);
        kc__wide_label_selector(o, "/spec/jobTemplate/spec/selector", row);
    }
    return row;
}

const kc__printer kc__printer_job = {
    "batch",
    "jobs",
    {COL_NAME,
     {"Status", "string", "", "Status of the job."},
     {"Completions", "string", "",
      "The desired number of successfully finished pods the job should be run with."},
     {"Duration", "string", "", "Time required to complete the job."},
     COL_AGE,
     COL_CONTAINERS,
     COL_IMAGES,
     {"Selector", "string", "", "A label query over pods that should match the pod count."}},
    8,
    row_job,
    3};

const kc__printer kc__printer_cronjob = {
    "batch",
    "cronjobs",
    {COL_NAME,
     {"Schedule", "string", "", "The schedule in Cron format."},
     {"Timezone", "string", "", "The time zone name for the given schedule."},
     {"Suspend", "boolean", "", "Whether the controller suspends subsequent executions."},
     {"Active", "integer", "", "The number of currently running jobs."},
     {"Last Schedule", "string", "", "When the job was last successfully scheduled."},
     COL_AGE,
     COL_CONTAINERS,
     COL_IMAGES,
     {"Selector", "string", "", "A label query over pods that should match the pod count."}},
    10,
    row_cronjob,
    3};
