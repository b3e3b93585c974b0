//! Entry point of the browser app: mounts the Yew root component.

fn main() {
    #[cfg(target_arch = "wasm32")]
    yew::Renderer::<www::App>::new().render();
}
