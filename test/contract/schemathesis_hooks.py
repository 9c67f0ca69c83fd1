"""Schemathesis hooks of the contract test (test/contract/schemathesis.test.ts, schemathesis.toml).

Two hooks. The first narrows one check. `positive_data_acceptance` (ST202) fails every schema-valid
request the server refuses. Whatever JSON Schema can state is in the document (types, bounds,
lengths, patterns, enums, oneOf, uniqueItems), so a refusal of such a rule is a contract failure
and stays one. Some rules no JSON Schema can state: they relate two fields (an index as long as
its target), a request to the model it names (a history too short for it), a request to the
server's data (a float data source that is not there, the days the ECB rates cover, a key's
earlier use), or a multipart part to its form (a file part, not a form field). The document states them in prose; a refusal on one
of them is the documented answer, 422 with the field's path and the rule in its message.

`filter_failure` drops an ST202 failure only when the answer is a 422 problem whose every error
message is made of the rules below, each listed with why JSON Schema cannot hold it. Any other
refusal of a schema-valid request still fails the run: a new rule must either go into the
document's schemas or be added here with its reason.

The second makes the generated forecast requests go deeper. Drawn from the schema alone, nearly
every one stops at the first rule between fields (an index as long as its target), so the models
behind them would hardly run. `map_case` applies those rules, as the document states them, to
the schema-valid (positive) stable forecast requests only; every value it writes is schema-valid
too, and negative cases are left as drawn.
"""

import datetime
import re

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData

# (rule, why JSON Schema cannot state it): regular expressions over an error's message, as the
# server writes it (engine/request-schema.ts, engine/model-checks.ts, engine/beta/query-rules.ts,
# api/beta/, api/idempotency.ts). `.*?` stands for names and values from the request.
INEXPRESSIBLE_RULES = [
    # POST /forecast and job submissions: lengths and order between fields (reference 2.2).
    (r"index has \d+ entries; target has \d+: they must be the same length", "a length equal to another array's"),
    (r"index must increase strictly: .*? does not come after .*?", "an order between array items"),
    (r"forecast creation date \d+ is past the end of the target \(\d+ observations\)", "a bound given by another array's length"),
    (r"has \d+ values; expected \d+( or \d+)? \(.*?\)", "a covariate's length given by the target's, fcds' and horizon"),
    (r"has \d+ entries; the future variables have \d+ values", "a length equal to another array's"),
    (r"dates future variables, but the series has none: send future_variables too, or leave it out", "a field allowed only beside another"),
    (r".*? is not index\[\d+\] \(.*?\): the future variables' dates follow the series' own, then continue it", "items equal to another array's"),
    (r"must increase strictly: .*? does not come after .*?", "an order between array items"),
    (r"series\[\d+\] ends at .*?: \d+ steps of .*? after it pass the year 9999, the last a date of the index can name", "the index's last date plus horizon steps of freq"),
    (r"is '.*?' but the request's model is '.*?'", "model_config.model must name the query's model"),
    # Rules of the model the query names (models/contract/model-registry.ts capabilities, each model's minimum history).
    (r"model '.*?' does not use .*?; models that do: .*?", "which covariates a model takes depends on the query's model"),
    (r".*?\bneeds? at least .*? observations? of history.*?", "a model's minimum history (and conformal windows': 2 x horizon + 1)"),
    (r"[\w-]+ could not fit .*?", "a model's fit of the values given (extreme magnitudes overflow its arithmetic)"),
    # Generated covariates (engine/covariates/): data they are read from, and names between them.
    (r"ECB rates \w+/\w+ start on [\d-]+; series \d+ starts on .*?, before any rate", "the series' dates against the rates' first day"),
    (r"unknown data source '.*?'(: no data sources are registered .*?|; registered data sources: .*?)", "the files in FLOAT_SOURCES_DIR"),
    (r"generates the column '.*?', as covariates\[\d+\] does: list each covariate once", "distinct generated columns across covariates"),
    (r"generates the column '.*?' twice: list each component once", "distinct generated columns within a covariate"),
    (r"model '.*?' cannot use forex: exchange rates are not known in advance, .*?", "which covariates a model takes depends on the query's model"),
    (r"has the name of a generated covariate column; rename it", "a variable's name against the generated columns"),
    # Rules between the beta query's fields (engine/beta/query-rules.ts).
    (r"'.*?' is not a whole number of .*? steps \(the time column's frequency\)(: .*?)?", "a duration relative to a column's frequency"),
    (r"name exactly one column with \{\"kind\": \"time\", \"frequency\": \.\.\.\}; found \d+", "exactly one map value of a kind"),
    (r"name at least one column with \{\"kind\": \"target\", \"aggregate\": \.\.\.\}", "at least one map value of a kind"),
    (r"is \d+ steps of .*?; at most \d+ are allowed", "a duration relative to a column's frequency"),
    (r".*? is not on the .*? grid \(steps start at .*?\)", "a cutoff on the time column's frequency grid"),
    (r"start .*? is after end .*?", "an order between two timestamps"),
    (r"'.*?' is not an identifier column \(identifiers: .*?\)", "a name that must be a key of another map with a given value"),
    (r"a roll-up path lists the identifiers '.*?' rolls up into, finest first", "a hierarchy path must not repeat its key"),
    (r"'.*?' appears twice on this path", "distinct names across nested arrays"),
    (r"'.*?' is already in the hierarchy of '.*?'; an identifier belongs to one hierarchy", "distinct names across a map's arrays"),
    (r"a covariate source has no target; its value columns are \"historical\"", "no map value of a kind"),
    (r"name at least one \"historical\" value column", "at least one map value of a kind"),
    (r"a covariate source has at most one time column", "at most one map value of a kind"),
    (r"'.*?' is already a column of the input or of another covariate; rename it in the source", "distinct keys across maps"),
    (r"'.*?' must be the time column or an identifier column of the (input|covariate schema)", "a name that must be a key of another map with a given value"),
    (r"a time column joins only with a time column", "roles of two columns named in different maps"),
    (r"join the covariate's time column '.*?' with the input's time column, or drop its role", "roles of two columns named in different maps"),
    # Multipart: a data part is a file part (its Content-Disposition has a filename, which OpenAPI
    # does not describe) holding Parquet or Arrow bytes, which no schema of a string can check.
    (r"part '.*?' was sent as a form field; send data as a file part \(curl -F '.*?'\)", "a file part, not a form field"),
    # Reconciliation (engine/beta/query-rules.ts): what each method needs of the hierarchy and selector.
    (r"reconciliation needs input.hierarchies: it reconciles the levels they roll up into", "a field required by another field's presence"),
    (r".*? applies to .*? only; the method is .*?", "an option allowed by another field's value"),
    (r"middle_out needs middle_level: the identifiers its middle level keeps", "a field required by another field's value"),
    (r"reconciliation makes each parent the sum of its children, but '.*?' rolls up by its \w+; .*?", "an option allowed by another field's value"),
    (r"only min_trace with .*? reads one-step residuals", "an option allowed by other fields' values"),
    (r"min_trace with .*? needs at least \d+ residuals per series", "a bound given by another field's value"),
    (r"reconciliation needs the bottom level .*?, which the selector leaves out .*?", "the selector's levels against the hierarchies"),
    (r".*? disaggregates along single parents and needs a tree, but the levels .*? cross .*?", "the hierarchies' shape"),
    (r".*? is not a level of the hierarchies; the levels are .*?", "a name that must be one of the levels the hierarchies make"),
    (r".*? needs (the top level|its middle level) .*?, which the selector leaves out .*?", "the selector's levels against the method"),
    # Scheduled backtests (api/routes/schedules.ts): the server's settings and the scheduler's grammar.
    (r"locators of local files are not enabled on this server .*?", "the server's BETA_DATA_ROOT"),
    (r"\w+:// locators are not enabled on this server.*?", "the server's BETA_OBJECT_STORES"),
    (r"locator '.*?' is outside the data root; locators are paths relative to it", "a path against the server's data root"),
    (r"locator '.*?': '\.\.' is not allowed in a locator", "a path's segments"),
    (r"inline:// names an uploaded part: write it as .*?", "a locator's scheme against the part form"),
    (r"is not a URL", "URL parsing beyond the pattern"),
    (r"(cannot be called: this server allows no webhook hosts .*?|names host '.*?', which is not on this server's list of webhook hosts|may not carry credentials; .*?)", "the server's SCHEDULE_WEBHOOK_HOSTS"),
    (r"the scheduler cannot take this spec: .*?", "the grammar of cron expressions, which Temporal parses"),
    (r"is not an IANA time zone .*?", "the IANA time zone database"),
    (r"must be at least 10s \(the scheduler never waits less for a missed run\)", "a duration's least length, which its pattern cannot state"),
    # Stated as a oneOf in the multipart query part; in the scheduled query's JSON body only in
    # prose, because schemathesis' coverage phase turns that nested oneOf into a body of `0`.
    (r"give the column roles in exactly one of input.columns and input.schema", "stated in prose in a JSON body"),
    (r"give exactly one of cron and interval", "stated in prose in a JSON body, as above"),
    (r"must be after start_at", "an order between two timestamps"),
    (r"identifier '.*?' would share its name with a result column of beta jobs .*?", "a name against the results' columns"),
    # The server's state: an Idempotency-Key already used for another request (its description).
    (r"was used at .*? for another request \(job .*?\); a key stands for one request: send a new key for a new one", "a key's earlier use"),
]

_RULES = "|".join(f"(?:{rule})" for rule, _why in INEXPRESSIBLE_RULES)
# The server joins the messages of one path with "; ".
_MESSAGE = re.compile(f"(?:{_RULES})(?:; (?:{_RULES}))*", re.DOTALL)


def explained_refusal(response) -> bool:
    """A 422 problem whose every error is one of the rules JSON Schema cannot state."""
    if response.status_code != 422:
        return False
    try:
        problem = response.json()
    except ValueError:
        return False
    errors = problem.get("errors") if isinstance(problem, dict) else None
    if not errors:
        return False
    return all(isinstance(e, dict) and _MESSAGE.fullmatch(str(e.get("message", ""))) for e in errors)


def _has_proto_key(value) -> bool:
    """Whether a JSON value holds an object key `__proto__`, at any depth."""
    if isinstance(value, dict):
        return "__proto__" in value or any(_has_proto_key(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_proto_key(v) for v in value)
    return False


def refused_proto_key(case, response) -> bool:
    """A 400 `invalid_json` for a body with a `__proto__` key: the documented refusal of every JSON
    body (it could change object prototypes). The maps of a body (column roles, selectors) take
    any key, so their schemas cannot list this one exception everywhere."""
    if response.status_code != 400 or not _has_proto_key(getattr(case, "body", None)):
        return False
    try:
        return response.json().get("code") == "invalid_json"
    except ValueError:
        return False


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    """Keep every failure but an ST202 refusal that one of the rules above explains."""
    return not (isinstance(failure, RejectedPositiveData) and (explained_refusal(response) or refused_proto_key(case, response)))


FORECAST_OPERATIONS = {("POST", "/forecast"), ("POST", "/forecast-jobs"), ("POST", "/backtest-jobs")}
FIRST_DAY = datetime.date(2020, 1, 1)


def _resized(values: list, length: int) -> list:
    """`values` cut or padded (with its last value, or 0) to `length`."""
    pad = values[-1] if values else 0
    return (values + [pad] * length)[:length]


def _follow_cross_field_rules(body: dict, model: str | None) -> None:
    """The rules of engine/request-schema.ts checkLengths and of model_config, applied in place."""
    # A JSON integer may arrive as 365.0.
    horizon = int(body["horizon"]) if isinstance(body.get("horizon"), (int, float)) else 1
    for serie in body.get("series") or []:
        if not isinstance(serie, dict) or not isinstance(serie.get("target"), list):
            continue
        n = len(serie["target"])
        # Daily dates: strictly increasing, as long as the target.
        serie["index"] = [(FIRST_DAY + datetime.timedelta(days=i)).isoformat() for i in range(n)]
        if isinstance(serie.get("fcds"), list):
            kept = [k for k in serie["fcds"] if isinstance(k, int) and k <= n]
            serie["fcds"] = kept or None
        for name, values in (serie.get("hist_variables") or {}).items():
            serie["hist_variables"][name] = _resized(values, n)
        for name, values in (serie.get("future_variables") or {}).items():
            serie["future_variables"][name] = _resized(values, n + horizon)
        serie.pop("future_variables_index", None)
    config = body.get("model_config")
    if isinstance(config, dict) and config.get("model") != model:
        body["model_config"] = None


# Only on these operations: a case hook on all of them makes schemathesis generate every case
# through a slower path (measured: its fuzzing phase took six times as long).
@schemathesis.hook.apply_to(method="POST", path=sorted(path for _method, path in FORECAST_OPERATIONS))
def map_case(context, case):
    """Positive stable forecast requests made to follow the rules between their fields."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return case
    if isinstance(case.body, dict):
        query = case.query if isinstance(case.query, dict) else {}
        model = query.get("model", case.operation.get_parameter("model", "query").definition["schema"].get("default"))
        _follow_cross_field_rules(case.body, model)
    return case
