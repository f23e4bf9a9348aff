/*
 * A Workload's state (api_wl_state_of): the flags read once from its
 * conditions and status.admission, and the phase Kueue's workload.Status
 * names (Finished beats Admitted beats QuotaReserved, else pending).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/meta.h"

/* conds: "Type=Status,Type=Status"; adm: whether status.admission is set */
static json_t *wl_with(const char *conds, bool adm)
{
    json_t *wl = json_object(), *st = json_object(), *arr = json_array();
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", conds);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        *eq = 0;
        json_array_append_new(arr, json_pack("{s:s, s:s}", "type", tok, "status", eq + 1));
    }
    json_object_set_new(st, "conditions", arr);
    if (adm)
        json_object_set_new(st, "admission", json_pack("{s:s}", "clusterQueue", "cq"));
    json_object_set_new(wl, "status", st);
    return wl;
}

static void phases_follow_kueue_status(void **state)
{
    (void)state;
    static const struct {
        const char *conds;
        bool adm;
        enum api_wl_phase phase;
        bool holds;
    } cases[] = {
        {"", false, API_WL_PENDING, false},
        {"QuotaReserved=False,Admitted=False", false, API_WL_PENDING, false},
        {"QuotaReserved=True", true, API_WL_QUOTA_RESERVED, true},
        /* the condition alone is Kueue's HasQuotaReservation; cueue holds a
         * reservation only with status.admission too */
        {"QuotaReserved=True", false, API_WL_QUOTA_RESERVED, false},
        {"QuotaReserved=True,Admitted=True", true, API_WL_ADMITTED, true},
        {"QuotaReserved=True,Admitted=True,Finished=True", true, API_WL_FINISHED, true},
        {"Finished=True,QuotaReserved=False", false, API_WL_FINISHED, false},
        {"Admitted=Unknown,QuotaReserved=True", true, API_WL_QUOTA_RESERVED, true},
        /* only the first condition of a type counts, as api_cond_get finds it */
        {"Admitted=False,Admitted=True", false, API_WL_PENDING, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *wl = wl_with(cases[i].conds, cases[i].adm);
        struct api_wl_state st = api_wl_state_of(wl);
        if (st.phase != cases[i].phase || api_wl_holds_reservation(&st) != cases[i].holds)
            fail_msg("case %zu (%s, admission %d): phase %s, holds %d", i, cases[i].conds,
                     cases[i].adm, api_wl_phase_name(st.phase), api_wl_holds_reservation(&st));
        json_decref(wl);
    }
}

static void flags_are_independent(void **state)
{
    (void)state;
    json_t *wl = wl_with("Evicted=True,QuotaReserved=True,DeactivationTarget=True", true);
    struct api_wl_state st = api_wl_state_of(wl);
    assert_true(st.evicted);
    assert_true(st.quota_reserved);
    assert_true(st.deactivation_target);
    assert_false(st.admitted);
    assert_false(st.finished);
    assert_int_equal(st.phase, API_WL_QUOTA_RESERVED);
    json_decref(wl);
}

static void no_document_is_pending(void **state)
{
    (void)state;
    struct api_wl_state st = api_wl_state_of(NULL);
    assert_int_equal(st.phase, API_WL_PENDING);
    assert_false(st.quota_reserved || st.has_admission || st.admitted || st.finished || st.evicted);
    assert_string_equal(api_wl_phase_name(API_WL_PENDING), "pending");
    assert_string_equal(api_wl_phase_name(API_WL_QUOTA_RESERVED), "quotaReserved");
    assert_string_equal(api_wl_phase_name(API_WL_ADMITTED), "admitted");
    assert_string_equal(api_wl_phase_name(API_WL_FINISHED), "finished");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(phases_follow_kueue_status),
        cmocka_unit_test(flags_are_independent),
        cmocka_unit_test(no_document_is_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
