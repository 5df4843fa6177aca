//! `/fit`, "Which kind fits my model?": pick a model (or type a custom
//! one), its precision, what you will do, the context and the sequences;
//! the page shows the memory it needs with the arithmetic, each kind of the
//! pools you may book, the smallest that holds it first, and that kind's
//! next free windows, one click from booked. A plain GET form: it works
//! without JavaScript. Linked from the booking panel and Find a slot.

use super::book::Book;
use super::calendar::outcome::{Banner, OutcomeBanner};
use super::field::{choice, Field};
use crate::model::{short_kind, FormRefusal};
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use crate::rules::fit::{FitAnswer, FitForm, FitPage, CATALOG};
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

#[server(prefix = "/rpc", endpoint = "fit", output = crate::codec::JsonText)]
pub async fn load_fit(form: FitForm, tz: String) -> Result<FitPage, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    Ok(crate::backend::fit::page(&ctx.db, &principal, form, &tz).await?)
}

#[component]
pub fn FitHelperPage() -> impl IntoView {
    let query = use_query_map();
    let book = ServerAction::<Book>::new();
    let page = Resource::new(
        move || (query.get(), super::viewer_zone(&query)),
        |(q, tz)| {
            let text = |key: &str| q.get(key).unwrap_or_default();
            let form = FitForm {
                model: text("model"),
                params_b: text("params_b"),
                layers: text("layers"),
                kv_heads: text("kv_heads"),
                head_dim: text("head_dim"),
                precision: text("precision"),
                workload: text("workload"),
                context: text("context"),
                sequences: text("sequences"),
            };
            load_fit(form, tz)
        },
    );
    let banner = move || book.value().get().map(Banner::answered).or_else(|| query.with(Banner::from_query));
    view! {
        <section class="page-head"><h1>"Which kind fits my model?"</h1>
            <a class="button secondary" href="/find">"Find a slot"</a></section>
        {super::said::loaded(page, "Could not answer: ", move |data| view! { <FitView data book banner=banner()/> })}
    }
}

#[component]
fn FitView(data: FitPage, book: ServerAction<Book>, banner: Option<Banner>) -> impl IntoView {
    let FitPage { form, answer, next, form_key, tz } = data;
    // A refused field says why beside it; the page's own reason, if any, under the form.
    let refusal = Signal::stored(answer.as_ref().and_then(|r| r.as_ref().err()).cloned());
    let number = move |name: &'static str, label: &'static str, value: String, hint: &'static str| {
        view! {
            <Field form="fit" name label said=refusal let:aria>
                <input name=name id=format!("fit-{name}") inputmode="numeric" value=value.clone() placeholder=hint
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
        }
    };
    let (model, precision, workload) = (form.model.clone(), form.precision.clone(), form.workload.clone());
    view! {
        {banner.map(|banner| view! { <OutcomeBanner banner action=book tz=tz.clone() key=form_key.clone()/> })}
        <Form method="GET" action="/fit" attr:class="panel fit-form fields-row" attr:id="fit-form">
            <Field form="fit" name="model" label="Model" said=refusal let:aria>
                <select name="model" id="fit-model" aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
                    <option value="" selected=model.is_empty() prop:selected=model.is_empty()>"Custom (type its parameters below)"</option>
                    {CATALOG.iter().map(|m| view! {
                        <option value=m.id selected=model == m.id prop:selected=model == m.id>{format!("{} ({}B parameters)", m.name, m.shape.params_b)}</option>
                    }).collect_view()}
                </select>
            </Field>
            {number("params_b", "Custom: billions of parameters", form.params_b.clone(), "13")}
            {number("layers", "Custom: layers", form.layers.clone(), "40")}
            {number("kv_heads", "Custom: KV heads", form.kv_heads.clone(), "8")}
            {number("head_dim", "Custom: head dimension", form.head_dim.clone(), "128")}
            <Field form="fit" name="precision" label="Precision" said=refusal let:aria>
                {choice("fit-precision", "precision", aria, &[("bf16", "BF16"), ("fp8", "FP8 / INT8"), ("int4", "INT4")], &precision)}
            </Field>
            <Field form="fit" name="workload" label="What you will do" said=refusal let:aria>
                {choice("fit-workload", "workload", aria, &[("inference", "Inference"), ("lora", "LoRA fine-tuning"), ("full", "Full fine-tuning")], &workload)}
            </Field>
            {number("context", "Context (tokens)", form.context.clone(), "8192")}
            {number("sequences", "Sequences at once", form.sequences.clone(), "1")}
            <input type="hidden" name="tz" value=tz.clone()/>
            <button class="button" type="submit" id="fit-submit">"Estimate"</button>
        </Form>
        {answer.map(|answer| match answer {
            Err(FormRefusal { field: Some(_), .. }) => ().into_any(),
            Err(FormRefusal { field: None, sentence }) => view! { <Alert id="fit-error">{sentence}</Alert> }.into_any(),
            Ok(answer) => view! { <Answer answer/> }.into_any(),
        })}
        {next.map(|slots| view! {
            <h2>"Next free for 2 hours"</h2>
            {if slots.windows.is_empty() {
                view! { <Empty id="fit-none">"No two hours are free in the next week; try Find a slot."</Empty> }.into_any()
            } else {
                view! { <super::find::FoundList slots book key=form_key.clone()/> }.into_any()
            }}
        })}
        <details class="muted">
            <summary>"How this is worked out, and its limits"</summary>
            <p>"Weights are the parameters times the bytes each takes (2 in BF16, 1 in FP8 or INT8, 0.5 in INT4). \
                The KV cache is 2 × layers × KV heads × head dimension × bytes × context × sequences. 20 % is added \
                for what a serving engine holds besides (the EleutherAI figure Hugging Face's accelerate \
                estimate-memory quotes). Full fine-tuning counts 16 bytes per parameter (mixed-precision Adam); \
                LoRA the frozen weights and 1 % of the parameters trained. A GPU's usable memory is 90 % of it \
                (vLLM's gpu_memory_utilization). Whole GPUs add up with tensor parallelism; MIG slices and \
                time-sliced shares do not. Training activations are not counted: leave room."</p>
        </details>
    }
}

#[component]
fn Answer(answer: FitAnswer) -> impl IntoView {
    let FitAnswer { estimate, kinds, verdict } = answer;
    view! {
        <section class="panel" id="fit-answer" aria-labelledby="fit-verdict">
            <h2 id="fit-verdict">{verdict}</h2>
            <ul id="fit-arithmetic">{estimate.arithmetic.into_iter().map(|line| view! { <li><code>{line}</code></li> }).collect_view()}</ul>
            <table class="bookings stacked" id="fit-kinds">
                <thead><tr><th scope="col">"Pool"</th><th scope="col">"Kind"</th><th scope="col">"Units"</th><th scope="col">"Why"</th></tr></thead>
                <tbody>
                    {kinds.into_iter().map(|k| {
                        let find = k.units.map(|n| format!("/find?pool={}&kind={}&quantity={n}", k.pool_id, super::url::urlencode(&k.kind)));
                        view! {
                            <tr class=if k.units.is_some() { "fits" } else { "no-fit" }>
                                <td data-label="Pool">{k.pool}</td>
                                <td data-label="Kind">{short_kind(&k.kind)}</td>
                                <td data-label="Units">{k.units.map_or_else(|| "—".to_string(), |n| n.to_string())}</td>
                                <td data-label="Why">{k.note} " "
                                    {find.map(|href| view! { <a href=href>"Find a window ›"</a> })}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}
