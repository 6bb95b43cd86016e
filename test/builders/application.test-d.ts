import { describe, expectTypeOf, it } from 'vitest';
import { application, button, datagrid, form, text } from '../../src/builders/index.js';

const app = application()
  .screen('home', (s) =>
    s.row(text('Orders', { type: 'heading' }), button('New', '/screens/new')).row(datagrid('orders')),
  )
  .screen('new', (s) =>
    s.row(
      form({
        items: [{ label: 'amount', type: 'number' }],
        workflow: 'create_order',
        redirect: '/screens/home',
      }),
    ),
  );

describe('application builder types', () => {
  it('accepts a declared screen as the start screen', () => {
    const built = app.start('new').build();
    expectTypeOf(built.start_screen_url).toEqualTypeOf<'home' | 'new'>();
  });

  it('rejects an unknown start screen', () => {
    // @ts-expect-error 'orders' is not a declared screen
    app.start('orders');
    // @ts-expect-error no screen declared yet
    application().start('home');
  });

  it('requires redirects to address /screens/<url>', () => {
    button('Home', '/screens/home?id={{query_params.id}}');
    // @ts-expect-error an outside address
    button('Evil', 'https://example.com');
    // @ts-expect-error a form redirect outside the app
    form({ items: [], workflow: 'w', redirect: '/elsewhere' });
  });

  it('rejects an unknown form item type', () => {
    // @ts-expect-error 'slider' is not a form item type
    form({ items: [{ label: 'x', type: 'slider' }], workflow: 'w' });
  });
});
