// Alerts: what is firing, what fired, the rules, silences, webhook targets and the delivery log.
import { AlertHistory, FiringAlerts } from "../components/alerts/AlertActivity";
import { RuleForm, RuleList } from "../components/alerts/RulesSection";
import { SilencesSection } from "../components/alerts/SilencesSection";
import { DeliveryLog, WebhookForm, WebhookList } from "../components/alerts/WebhooksSection";

export function AlertsPage() {
  return (
    <section className="page">
      <h1>Alerts</h1>
      <h2>Firing now</h2>
      <FiringAlerts />
      <h2>History</h2>
      <AlertHistory />
      <h2>Rules</h2>
      <RuleList />
      <RuleForm />
      <h2>Silences</h2>
      <SilencesSection />
      <h2>Webhook targets</h2>
      <WebhookList />
      <WebhookForm />
      <h2>Delivery log</h2>
      <DeliveryLog />
    </section>
  );
}
